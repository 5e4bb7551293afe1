from __future__ import annotations

from hctqa.core import taxonomy
from hctqa.core.query_templates import TARGET_MIX, TEMPLATES


def test_every_template_fills_a_consistent_property_set() -> None:
    for template in TEMPLATES:
        values = template.filled()
        assert taxonomy.check(taxonomy.QUERY_PROPERTIES, values) == [], template.code
        assert any(v is True for v in values.values())


def test_the_target_mix_names_top_level_properties() -> None:
    roots = {p.code for p in taxonomy.QUERY_PROPERTIES.roots()}
    assert set(TARGET_MIX) == roots
    assert all(0 < share <= 1 for share in TARGET_MIX.values())
