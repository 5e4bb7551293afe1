"""Writes a tiny model folder that vLLM serves with random weights (``--load-format dummy``):
a config, a generation config, a byte-level BPE tokenizer trained here on the text given,
and a chat template. Nothing is downloaded.

It runs under the vLLM virtualenv's python (``tests.vllm_server`` starts it), which has the
``tokenizers`` package; it imports nothing of the platform's.

    .venv-vllm/bin/python tests/vllm_model.py --kind text --corpus prompts.txt --out DIR

Sizes: hidden size 128 with 2 heads of 64 (vLLM's CPU attention refuses a head size of 16),
2 layers. ``--kind vision`` writes a BLIP-2 (a 2-layer vision tower on 56-pixel images, a
1-layer Q-Former, a 2-layer OPT of the same text size) and its processor's settings: the
vision-language architecture this CPU build serves without torchvision (see
docs/development.md, "A real vLLM server in the tests").
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

BOS, EOS = "<s>", "</s>"
ROLES = ["<|system|>", "<|user|>", "<|assistant|>"]
# An image part's place in the prompt text (BLIP-2's own image token; vLLM's processor puts
# the Q-Former's query tokens at the start of the prompt).
IMAGE = "<image>"

# One turn per message, each role as a special token; a list of parts (a vision prompt) is
# its text parts in order, with the image placeholder where an image part is.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' }}"
    "{%- if message['content'] is string %}{{ message['content'] }}"
    "{%- else %}{%- for part in message['content'] %}"
    "{%- if part['type'] == 'text' %}{{ part['text'] }}"
    "{%- else %}<image>{%- endif %}"
    "{%- endfor %}{%- endif %}"
    "{{ '\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|assistant|>\n' }}{%- endif %}"
)


def train_tokenizer(corpus: Path, *, vocab_size: int, vision: bool) -> Tokenizer:
    special = [BOS, EOS, *ROLES, *([IMAGE] if vision else [])]
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train([str(corpus)], trainer)
    return tokenizer


def _text_config(vocab: int, *, max_len: int) -> dict:
    return {
        "hidden_size": 128,
        "intermediate_size": 256,
        "num_hidden_layers": 2,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
        "vocab_size": vocab,
        "max_position_embeddings": max_len,
        "rms_norm_eps": 1e-6,
        "rope_theta": 10000.0,
        "hidden_act": "silu",
        "tie_word_embeddings": False,
        "torch_dtype": "float32",
    }


def write_model(out: Path, corpus: Path, *, kind: str, vocab_size: int, max_len: int) -> None:
    vision = kind == "vision"
    out.mkdir(parents=True, exist_ok=True)
    tokenizer = train_tokenizer(corpus, vocab_size=vocab_size, vision=vision)
    tokenizer.save(str(out / "tokenizer.json"))
    ids = {token: tokenizer.token_to_id(token) for token in [BOS, EOS, IMAGE]}
    vocab = tokenizer.get_vocab_size()
    text = _text_config(vocab, max_len=max_len)
    common = {"bos_token_id": ids[BOS], "eos_token_id": ids[EOS]}
    if vision:
        # A 56-pixel image in 14-pixel patches, read by a 1-layer Q-Former into 4 tokens.
        queries = 4
        config = {
            "architectures": ["Blip2ForConditionalGeneration"],
            "model_type": "blip-2",
            "num_query_tokens": queries,
            "image_token_index": ids[IMAGE],
            "text_config": {
                "model_type": "opt",
                "hidden_size": text["hidden_size"],
                "ffn_dim": text["intermediate_size"],
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "word_embed_proj_dim": text["hidden_size"],
                "max_position_embeddings": max_len,
                "vocab_size": vocab,
                "do_layer_norm_before": True,
                "activation_function": "relu",
                "enable_bias": True,
                "pad_token_id": ids[EOS],
                **common,
            },
            "vision_config": {
                "model_type": "blip_2_vision_model",
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_hidden_layers": 2,
                "num_attention_heads": 1,
                "image_size": 56,
                "patch_size": 14,
            },
            "qformer_config": {
                "model_type": "blip_2_qformer",
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_hidden_layers": 1,
                "num_attention_heads": 1,
                "encoder_hidden_size": 64,
            },
            "torch_dtype": "float32",
            **common,
        }
        (out / "preprocessor_config.json").write_text(
            json.dumps(
                {
                    "image_processor_type": "BlipImageProcessor",
                    "processor_class": "Blip2Processor",
                    "do_resize": True,
                    "size": {"height": 56, "width": 56},
                    "resample": 3,
                    "do_rescale": True,
                    "do_normalize": True,
                    "do_convert_rgb": True,
                    "image_mean": [0.48145466, 0.4578275, 0.40821073],
                    "image_std": [0.26862954, 0.26130258, 0.27577711],
                },
                indent=1,
            )
        )
        (out / "processor_config.json").write_text(
            json.dumps({"processor_class": "Blip2Processor", "num_query_tokens": queries})
        )
    else:
        config = {
            "architectures": ["LlamaForCausalLM"],
            "model_type": "llama",
            **text,
            **common,
        }
    (out / "config.json").write_text(json.dumps(config, indent=1))
    (out / "generation_config.json").write_text(json.dumps(common, indent=1))
    tokenizer_config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        "bos_token": BOS,
        "eos_token": EOS,
        "model_max_length": max_len,
        "chat_template": CHAT_TEMPLATE,
    }
    if vision:
        tokenizer_config["processor_class"] = "Blip2Processor"
    (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config, indent=1))
    (out / "chat_template.jinja").write_text(CHAT_TEMPLATE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, required=True, help="text to train the BPE on")
    parser.add_argument("--kind", choices=["text", "vision"], default="text")
    parser.add_argument("--vocab-size", type=int, default=4096)
    parser.add_argument("--max-len", type=int, default=65536, help="positions the model has")
    args = parser.parse_args()
    write_model(
        args.out, args.corpus, kind=args.kind, vocab_size=args.vocab_size, max_len=args.max_len
    )


if __name__ == "__main__":
    main()
