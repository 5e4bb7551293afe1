# Shared by scripts/run and scripts/test: a Python 3.11 virtual environment in .venv with the
# pinned requirements, reinstalled only when a requirements file changes.

pick_python() {
  for candidate in "${PYTHON:-}" python3.11 python3; do
    [ -n "$candidate" ] || continue
    if command -v "$candidate" >/dev/null 2>&1 &&
      "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  echo "Python 3.11 is required: install it, or set PYTHON=/path/to/python3.11" >&2
  return 1
}

ensure_venv() {
  local requirements="$1"
  if [ ! -x .venv/bin/python ]; then
    local python
    python=$(pick_python)
    echo "Creating .venv with $python"
    "$python" -m venv .venv
    .venv/bin/python -m pip install --quiet --upgrade pip
  fi
  local stamp=".venv/.installed-$(basename "$requirements")"
  local digest
  digest=$(cat "$requirements" requirements.txt | sha256sum | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    echo "Installing $requirements into .venv"
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"
    echo "$digest" >"$stamp"
  fi
}

# The vLLM server's own virtualenv, .venv-vllm, with requirements-vllm.txt: the real
# OpenAI-compatible server of the inference tests (pytest -m vllm) and of
# benchmarks/inference_throughput.py. Never .venv: vLLM pins its own torch, fastapi, pydantic
# and openai. The list is complete and installed with --no-deps, so pip takes exactly it: the
# CPU build of torch, and no torchvision, torchaudio or torchcodec (see the file). About 3 GB
# and a few minutes, once; again only when the file changes.
ensure_vllm_venv() {
  local venv=.venv-vllm
  if [ ! -x "$venv/bin/python" ]; then
    local python
    python=$(pick_python)
    echo "Creating $venv with $python"
    "$python" -m venv "$venv"
  fi
  local stamp="$venv/.installed-requirements-vllm.txt"
  local digest
  digest=$(sha256sum requirements-vllm.txt | cut -d' ' -f1)
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$digest" ]; then
    echo "Installing requirements-vllm.txt into $venv (about 3 GB; a few minutes the first time)"
    rm -f "$stamp"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps \
      -r requirements-vllm.txt
    # Left by an earlier install or by hand: they break vLLM's start beside the CPU torch.
    "$venv/bin/python" -m pip uninstall --quiet --disable-pip-version-check -y \
      torchvision torchaudio torchcodec 2>/dev/null || true
    "$venv/bin/python" -c 'import torch, vllm.entrypoints.openai.api_server
assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build"' || {
      echo "The vLLM virtualenv $venv does not import; see above" >&2
      return 1
    }
    echo "$digest" >"$stamp"
  fi
}

# Debian's chromium, which the browser tests drive. Never a browser download.
ensure_chromium() {
  local browser="${CHROMIUM_PATH:-/usr/bin/chromium}"
  [ -x "$browser" ] && return 0
  echo "Installing Debian's chromium for the browser tests"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
  else
    echo "The browser tests need Debian's chromium: apt-get install chromium (or set CHROMIUM_PATH)" >&2
    return 1
  fi
}

# The OCR language data for pages without a text layer and for images: Debian's Tesseract
# English (the engine itself comes with tesserocr from PyPI). Nothing is downloaded at run time.
# Another language is one more package, e.g. tesseract-ocr-ara (README, "OCR languages").
ensure_ocr() {
  local data="${TESSDATA_PREFIX:-/usr/share/tesseract-ocr/5/tessdata}"
  [ -f "$data/eng.traineddata" ] && return 0
  echo "Installing Debian's tesseract-ocr-eng (OCR of scans and images)"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tesseract-ocr-eng >/dev/null
  elif command -v sudo >/dev/null 2>&1; then
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends tesseract-ocr-eng >/dev/null
  else
    echo "Reading scans and images needs Debian's tesseract-ocr-eng: apt-get install tesseract-ocr-eng (or set TESSDATA_PREFIX)" >&2
    return 1
  fi
}

# supervise NAME COMMAND...: run COMMAND in the background, appending its output to
# var/log/NAME.log and its pid to var/run/NAME.pid, and start it again whenever it exits
# (a killed worker comes back; the rest of the platform keeps running). A process that
# ran for a minute is restarted at once; one that keeps dying waits longer each time, up
# to 30 s. TERM stops the command, then the supervisor. Call it with `&`.
supervise() {
  local name="$1"
  shift
  local log="var/log/$name.log" child="" delay=1 started
  mkdir -p var/log var/run
  trap 'trap - TERM; [ -z "$child" ] || kill -TERM "$child" 2>/dev/null; wait "$child" 2>/dev/null || true; exit 0' TERM
  while true; do
    started=$SECONDS
    "$@" >>"$log" 2>&1 &
    child=$!
    echo "$child" >"var/run/$name.pid"
    wait "$child" || true
    if ((SECONDS - started >= 60)); then
      delay=1
    fi
    echo "[$(date -u +%FT%TZ)] $name (pid $child) exited; starting it again in $delay s" | tee -a "$log" >&2
    child=""
    # In the background, so that TERM is handled at once.
    sleep "$delay" &
    wait $! || true
    if ((delay < 30)); then
      delay=$((delay * 2))
    fi
  done
}

# prepare_platform DEMO_LOG: the database migrated, the static files collected, the demo data
# (its output also in DEMO_LOG) and, with HCTQA_DATA_DIR, your copy of the HCT-QA release:
# what scripts/run serves, and what benchmarks/load.py loads the server it measures with.
prepare_platform() {
  local demo_log="$1"
  .venv/bin/python manage.py migrate --noinput
  .venv/bin/python manage.py collectstatic --noinput -v0
  .venv/bin/python manage.py load_demo >"$demo_log"
  # What it loaded; the logins are shown once, in the start banner (demo_logins).
  demo_summary "$demo_log"
  # With your copy of the HCT-QA release, the real tables and the paper's Table 1 rows as well.
  if [ -n "${HCTQA_DATA_DIR:-}" ]; then
    local data="$HCTQA_DATA_DIR"
    # The benchmark's official test split, when the data folder holds it (the rest of the
    # tables go to train and validation by a stable hash).
    local splits=()
    if [ -f "$data/hctqa-real/official-test-tables.csv" ]; then
      splits=(--splits "$data/hctqa-real/official-test-tables.csv")
    fi
    .venv/bin/python manage.py import_hctqa --qaps "$data/hctqa-real/qaps.json.gz" \
      --csvs "$data/hctqa-real/csvs.tar.gz" "${splits[@]}"
    # The synthetic families the folder holds (Number_of_students.zip, …), so that rows scored
    # here on synthetic tables are scored on the benchmark's, not on the demo's.
    local families
    shopt -s nullglob
    families=("$data"/hctqa-synthetic/*.zip)
    shopt -u nullglob
    if [ "${#families[@]}" -gt 0 ]; then
      .venv/bin/python manage.py import_synthetic "${families[@]}"
    fi
    .venv/bin/python manage.py import_paper_results "$data/paper-table1.csv"
    # The tracks beside QA: the ICDAR 2013 EU set as a ground-truth set of the extraction
    # track, and every track's items built by the worker once it starts (drawing the
    # synthetic tables takes a minute or two, then the platform's baselines on the test items,
    # OCR of the drawn PNGs included, several minutes more; /tracks/ follows it).
    if [ -d "$data/icdar2013-eu" ]; then
      .venv/bin/python manage.py import_ground_truth "$data/icdar2013-eu" --code icdar-eu \
        --name "ICDAR 2013 Table Competition (EU half)" --licence "MIT (tabula-java)"
    fi
    # (Refused, and harmless, when a build from an earlier start is still queued.)
    .venv/bin/python manage.py build_track_items --queue || true
  fi
}

# stop_supervisors_on_exit PID...: when this script exits, stop these supervisors (and what
# they run). Ctrl-C or TERM is a clean stop: it says "Stopped." and exits 0.
stop_supervisors_on_exit() {
  _supervisors=("$@")
  trap '_stop_supervisors; echo "Stopped." >&2; exit 0' INT TERM
  trap _stop_supervisors EXIT
}

_stop_supervisors() {
  trap - INT TERM EXIT
  kill -TERM "${_supervisors[@]}" 2>/dev/null || true
  wait "${_supervisors[@]}" 2>/dev/null || true
}

# wait_for_supervisors: wait while the supervisors run. One that stops on its own (it was
# killed) is an error: the rest are stopped, and the script exits 1.
wait_for_supervisors() {
  wait -n "${_supervisors[@]}" || true
  echo "A supervisor stopped; see var/log/." >&2
  exit 1
}

# synthetic_params_dir DATA: the folder of the synthetic generator's parameter files
# (PARAM_tableTemplates.json, …) in a data folder: DATA/hctqa-synthetic, or DATA itself.
# Fails when neither holds them.
synthetic_params_dir() {
  local folder
  for folder in "$1/hctqa-synthetic" "$1"; do
    if [ -f "$folder/PARAM_tableTemplates.json" ]; then
      echo "$folder"
      return 0
    fi
  done
  return 1
}

# demo_summary LOG: what load_demo printed to LOG, without the logins that follow it.
demo_summary() {
  sed '/^Demo logins/,$d' "$1"
}

# demo_logins LOG: the demo logins that load_demo printed to LOG, for the start banner.
demo_logins() {
  sed -n '/^Demo logins/,$p' "$1"
}
