"""Stages 1 and 2 of the generator: table specs, relational tables and their pivot into HCTs.

Follows SYNTHETIC.md §3–§5: the combination grid, R's draws in R's order, the signature that
drops duplicate designs, and pivottabler's layout of nested headers, totals and outline rows.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hctqa.core.synthgen.params import Code, Family, Params, sql_name
from hctqa.core.synthgen.rrandom import RRandom, r_colon, r_format, r_round, sample_r

# --- stage 1: table specs ------------------------------------------------------------------


@dataclass(frozen=True)
class TableSpec:
    """One combination of layout parameters for one family (``<family>_set<i>``)."""

    itab: int  # 1-based position among all specs of all families: drives the seed
    family: Family
    set_index: int
    shuffle: str
    name_pos: str  # carried along, never shown (as in the original)
    col_agg: str  # none | right
    row_agg: str  # none | top | bottom
    levels: str
    row_format: str  # new | indent
    col_codes: tuple[str, ...]
    col_samples: tuple[tuple[int, ...], ...]
    row_codes: tuple[str, ...]
    row_samples: tuple[tuple[int, ...], ...]
    replica: int

    @property
    def name(self) -> str:
        return f"{self.family.prefix}_set{self.set_index}"

    def seed(self, replica: int) -> int:
        return (self.itab - 1) * self.replica + replica


def table_specs(params: Params) -> list[TableSpec]:
    """All specs, family-major, combinations in R's ``expand.grid`` order (first factor
    fastest: shuffle, name position, aggregate position, levels, row format)."""
    specs: list[TableSpec] = []
    grid = list(
        itertools.product(
            params.row_format,
            params.col_row_levels,
            params.col_row_agg_pos,
            params.col_row_name_pos,
            params.shuffle,
        )
    )
    for family in params.families:
        for index, (row_format, levels, agg_pos, name_pos, shuffle) in enumerate(grid, start=1):
            col_agg, row_agg = agg_pos.split("_", 1)
            if row_format == "new" and row_agg == "top":
                continue
            col_levels, row_levels = (int(x) for x in levels.split("_"))
            nc = min(col_levels, len(family.col_codes))
            nr = min(row_levels, len(family.row_codes))
            specs.append(
                TableSpec(
                    itab=len(specs) + 1,
                    family=family,
                    set_index=index,
                    shuffle=shuffle,
                    name_pos=name_pos,
                    col_agg=col_agg,
                    row_agg=row_agg,
                    levels=levels,
                    row_format=row_format,
                    col_codes=family.col_codes[:nc],
                    col_samples=family.col_samples[:nc],
                    row_codes=family.row_codes[:nr],
                    row_samples=family.row_samples[:nr],
                    replica=params.replica,
                )
            )
    return specs


# --- stage 2: the relational table ---------------------------------------------------------


def _sample_values(rng: RRandom, values: Sequence[str], sample: tuple[int, ...]) -> list[str]:
    """``n..m`` consecutive values at a random start (R's ``sampleValues``)."""
    if len(sample) != 2:
        return list(values)
    count = len(values)
    n = max(1, min(sample[0], count))
    m = max(n, min(sample[1], count))
    size = n if n == m else sample_r(rng, r_colon(n, m), 1)[0]
    start = sample_r(rng, r_colon(1, count - size + 1), 1)[0]
    return list(values[start - 1 : start - 1 + size])


def _unique(items: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _sample_hierarchy(rng: RRandom, code: Code, sample: tuple[int, ...]) -> list[str]:
    """Paths ``a.b(.c)`` kept from a hierarchical code, level by level, parent by parent."""
    paths = [list(p) for p in code.paths]
    if len(sample) != 2:
        return [".".join(p) for p in paths]
    kept = set(_sample_values(rng, _unique([p[0] for p in paths]), sample))
    rows = [p for p in paths if p[0] in kept]
    for _ in range(1, len(code.names)):
        next_rows: list[list[str]] = []
        for parent in _unique([r[0] for r in rows]):
            group = [r for r in rows if r[0] == parent]
            chosen = set(_sample_values(rng, _unique([r[1] for r in group]), sample))
            next_rows.extend(r for r in group if r[1] in chosen)
        rows = [[f"{r[0]}.{r[1]}", *r[2:]] for r in next_rows]
    return [r[0] for r in rows]


@dataclass(frozen=True)
class Attribute:
    name: str  # display name
    code: str
    hierarchical: bool
    order: tuple[str, ...]  # factor order of a flat attribute's values


@dataclass
class Relational:
    """One replica's relational table (T_REL) and the draws that shape its HCT."""

    spec: TableSpec
    replica: int
    seed: int
    attributes: list[Attribute]  # DB column order: column codes then row codes
    rows: list[tuple[str, ...]]
    values: list[float]
    integer: bool
    col_names: list[str]  # HCT order (after the shuffle), hierarchical levels expanded
    row_names: list[str]
    border: bool
    l_values: list[str]  # every sampled value, in stage order (for the signature)
    side_sizes: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # values per code
    warning: str = ""
    hct_csv: str = ""
    hct_table: str = ""
    _cells: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return f"{self.spec.name}_{self.replica}"

    @property
    def signature_db(self) -> str:
        border = "WithBorderLines" if self.border else "WithoutBorderLines"
        return (
            "ALL&&&"
            + "&&&".join(self.l_values)
            + "&&&COLS&&&"
            + "&&&".join(self.col_names)
            + "&&&ROWS&&&"
            + "&&&".join(self.row_names)
            + "&&&STYLE&&&"
            + border
        )

    @property
    def agg_col_names(self) -> list[str]:
        return list(self.col_names) if self.spec.col_agg != "none" else []

    @property
    def agg_row_names(self) -> list[str]:
        return list(self.row_names) if self.spec.row_agg != "none" else []

    @property
    def signature_hct(self) -> str:
        family = self.spec.family
        return (
            self.signature_db
            + f"&&&AGG_NAME&&&{family.agg_name}&&&AGG_FUN&&&{family.agg_fun}"
            + "&&&AGG_COLS&&&"
            + "&&&".join(self.agg_col_names)
            + "&&&AGG_ROWS&&&"
            + "&&&".join(self.agg_row_names)
        )

    @property
    def value_format(self) -> str:
        if self.spec.family.agg_fun == "sum" and self.integer:
            return "%d"
        return "%.2f"


def _draw_values(rng: RRandom, family: Family, count: int) -> tuple[list[float], bool]:
    spec = family.values
    if spec.integer:
        low = int(spec.low)
        high = max(low + count, int(spec.high))
        values: list[float] = [low + i - 1 for i in rng.sample_int(high - low + 1, count)]
    else:
        values = [r_round(rng.runif(spec.low, spec.high), 2) for _ in range(count)]
        # R's makeDistinct: nudge duplicates up by 0.01 until every value is unique.
        while len(set(values)) != len(values):
            ordered = sorted(values)
            equal = [i for i in range(len(ordered) - 1) if ordered[i + 1] - ordered[i] == 0]
            for i in equal:
                ordered[i + 1] = ordered[i + 1] + 10.0**-2
            values = ordered
    return sample_r(rng, values), spec.integer


def relational_table(params: Params, spec: TableSpec, replica: int) -> Relational:
    """Stage 2 for one replica: the draws of §4 in R's order."""
    seed = spec.seed(replica)
    rng = RRandom(seed)
    lists: list[list[str]] = []
    code_names: dict[str, list[str]] = {"col": [], "row": []}
    attributes: list[Attribute] = []
    for side, codes, samples in (
        ("col", spec.col_codes, spec.col_samples),
        ("row", spec.row_codes, spec.row_samples),
    ):
        for code_key, sample in zip(codes, samples, strict=True):
            code = params.codes[code_key]
            if code.hierarchical:
                chosen = _sample_hierarchy(rng, code, sample)
                for name in code.names:
                    attributes.append(Attribute(name, code_key, True, ()))
            else:
                chosen = _sample_values(rng, [p[0] for p in code.paths], sample)
                attributes.append(Attribute(code.names[0], code_key, False, tuple(chosen)))
            lists.append(chosen)
            code_names[side].append(code_key)
    # expand.grid: the first list varies fastest.
    rows: list[tuple[str, ...]] = []
    for combo in itertools.product(*reversed(lists)):
        parts: list[str] = []
        for value in reversed(combo):
            parts.extend(value.split("."))
        rows.append(tuple(parts))
    values, integer = _draw_values(rng, spec.family, len(rows))
    if all(a.hierarchical for a in attributes) and not integer:
        # With no flat attribute R builds a character matrix: values go through as.character.
        values = [float(r_format(v)) for v in values]
    col_order = list(code_names["col"])
    row_order = list(code_names["row"])
    rng.sample_number(1)  # sample(length(shuffle)): the shuffle mode, a single draw
    if spec.shuffle == "rowscols":
        col_order = [col_order[i - 1] for i in rng.sample_number(len(col_order))]
        row_order = [row_order[i - 1] for i in rng.sample_number(len(row_order))]
    border = rng.sample([False, True], 1)[0]
    return Relational(
        spec=spec,
        replica=replica,
        seed=seed,
        attributes=attributes,
        rows=rows,
        values=values,
        integer=integer,
        col_names=[n for c in col_order for n in params.codes[c].names],
        row_names=[n for c in row_order for n in params.codes[c].names],
        border=border,
        l_values=[v for lst in lists for v in lst],
        side_sizes=(
            tuple(len(x) for x in lists[: len(spec.col_codes)]),
            tuple(len(x) for x in lists[len(spec.col_codes) :]),
        ),
    )


# --- files of the relational table ---------------------------------------------------------


def db_csv(table: Relational) -> str:
    names = [a.name for a in table.attributes] + ["Value"]
    lines = [",".join(names), ",".join(sql_name(n) for n in names)]
    for row, value in zip(table.rows, table.values, strict=True):
        lines.append(",".join([*row, r_format(value)]))
    return "\n".join(lines) + "\n"


_DB_TH_FIRST = "<tr><th style='border-bottom: 1px solid grey; border-top: 2px solid grey;'></th>"
_DB_TH = (
    "<th style='font-weight: 900; border-bottom: 1px solid grey; border-top: 2px solid grey;"
    " text-align: center;'>{}</th>"
)


def db_html(table: Relational) -> str:
    lines = [
        "<table class='gmisc_table' style='border-collapse: collapse; margin-top: 1em;"
        " margin-bottom: 1em;' >",
        "<thead>",
        _DB_TH_FIRST,
    ]
    lines.extend(_DB_TH.format(a.name) for a in table.attributes)
    lines.extend([_DB_TH.format("Value"), "</tr>", "</thead>", "<tbody>"])
    last = len(table.rows) - 1
    for k, (row, value) in enumerate(zip(table.rows, table.values, strict=True)):
        prefix = "border-bottom: 2px solid grey; " if k == last else ""
        lines.append("<tr>")
        lines.append(f"<td style='{prefix}text-align: left;'>{k + 1}</td>")
        for cell in [*row, r_format(value)]:
            lines.append(f"<td style='{prefix}text-align: center;'>{cell}</td>")
        lines.append("</tr>")
    lines.extend(["</tbody>", "</table>"])
    return "\n".join(lines)


# --- the pivot -----------------------------------------------------------------------------


@dataclass
class _Node:
    label: str
    total: bool
    filters: tuple[tuple[int, str], ...]  # (attribute index, value) down to this node
    children: list[_Node] = field(default_factory=list)
    leaves: int = 1


def _tree(
    attr_index: list[int],
    attributes: list[Attribute],
    rows: list[tuple[str, ...]],
    member: list[int],
    totals: list[bool],
    agg_name: str,
    level: int = 0,
    filters: tuple[tuple[int, str], ...] = (),
) -> list[_Node]:
    if level == len(attr_index):
        return []
    a = attr_index[level]
    present = _unique([rows[i][a] for i in member])
    attribute = attributes[a]
    if attribute.hierarchical:
        present.sort(key=lambda s: s.encode("utf-8"))  # character column: C-locale order
    else:
        rank = {v: k for k, v in enumerate(attribute.order)}
        present.sort(key=rank.__getitem__)  # factor: level order
    nodes = []
    for value in present:
        sub = [i for i in member if rows[i][a] == value]
        node = _Node(value, False, (*filters, (a, value)))
        node.children = _tree(
            attr_index, attributes, rows, sub, totals, agg_name, level + 1, node.filters
        )
        nodes.append(node)
    if totals[level]:
        total = _Node(agg_name, True, filters)
        parent = total
        for _ in range(level + 1, len(attr_index)):
            blank = _Node("", True, filters)
            parent.children = [blank]
            parent = blank
        nodes.append(total)
    for node in nodes:
        _count(node)
    return nodes


def _count(node: _Node) -> int:
    node.leaves = sum(_count(c) for c in node.children) if node.children else 1
    return node.leaves


def _leaf_paths(nodes: list[_Node]) -> list[list[_Node]]:
    out: list[list[_Node]] = []
    for node in nodes:
        if node.children:
            out.extend([node, *p] for p in _leaf_paths(node.children))
        else:
            out.append([node])
    return out


def _r_mean(values: np.ndarray) -> float:
    """R's mean of doubles: a long-double sum (cumsum is sequential, as R's loop is), then the
    mean of the residuals added."""
    n = np.longdouble(len(values))
    s = np.cumsum(values)[-1] / n
    if np.isfinite(s):
        s += np.cumsum(values - s)[-1] / n
    return float(s)


def _aggregate(fun: str, chosen: list[int], table: Relational, wide: np.ndarray | None) -> float:
    values = table.values
    if len(chosen) == 1:
        return float(values[chosen[0]])  # every function of one value is that value
    if fun == "min":
        return min(values[i] for i in chosen)
    if fun == "max":
        return max(values[i] for i in chosen)
    if wide is None:
        # Whole numbers: sums are exact in any order, and a mean of integers is never close
        # enough to a two-decimal tie for R's long-double arithmetic to change its printing.
        total = sum(int(values[i]) for i in chosen)
        return float(total) if fun == "sum" else total / len(chosen)
    subset = wide[chosen]
    if fun == "sum":
        return float(np.cumsum(subset)[-1])
    return _r_mean(subset)


def _format(value: float, fmt: str) -> str:
    return str(int(value)) if fmt == "%d" else f"{value:.2f}"


def pivot(table: Relational) -> None:
    """Lay the table out as its HCT (CSV and the HTML ``<table>``) and set ``warning``."""
    spec = table.spec
    family = spec.family
    index = {a.name: i for i, a in enumerate(table.attributes)}
    col_attrs = [index[n] for n in table.col_names]
    row_attrs = [index[n] for n in table.row_names]
    everyone = list(range(len(table.rows)))
    p, q = len(col_attrs), len(row_attrs)
    col_totals = [spec.col_agg == "right"] * p
    indent = spec.row_format != "new"
    if indent:
        row_totals = [spec.row_agg != "none"] + [False] * (q - 1)
    else:
        row_totals = [spec.row_agg != "none"] * q
    col_tree = _tree(col_attrs, table.attributes, table.rows, everyone, col_totals, family.agg_name)
    row_tree = _tree(row_attrs, table.attributes, table.rows, everyone, row_totals, family.agg_name)
    col_leaves = _leaf_paths(col_tree)
    row_leaves = _leaf_paths(row_tree)
    fmt = table.value_format
    fun = family.agg_fun

    by_value: dict[tuple[int, str], set[int]] = {}
    for i, row in enumerate(table.rows):
        for a, v in enumerate(row):
            by_value.setdefault((a, v), set()).add(i)
    everyone_set = set(everyone)

    def matching(filters: tuple[tuple[int, str], ...]) -> set[int]:
        out = everyone_set
        for key in filters:
            out = out & by_value[key]
        return out

    col_sets = [matching(path[-1].filters) for path in col_leaves]
    integral = table.integer or all(float(v).is_integer() for v in table.values)
    wide = None if integral else np.array(table.values, dtype=np.longdouble)

    def cells(row_filter: tuple[tuple[int, str], ...]) -> list[str]:
        rows = matching(row_filter)
        return [_format(_aggregate(fun, sorted(rows & cs), table, wide), fmt) for cs in col_sets]

    table.warning = pivot_warning(table, len(col_leaves), row_tree, len(row_leaves))
    if table.warning:
        return
    _render(table, col_tree, col_leaves, row_leaves, q, p, indent, cells)


def layout_warning(table: Relational) -> str:
    """The pivot's warning without laying out the cells (enough to apply the save rules)."""
    spec = table.spec
    index = {a.name: i for i, a in enumerate(table.attributes)}
    col_attrs = [index[n] for n in table.col_names]
    row_attrs = [index[n] for n in table.row_names]
    everyone = list(range(len(table.rows)))
    p, q = len(col_attrs), len(row_attrs)
    indent = spec.row_format != "new"
    col_totals = [spec.col_agg == "right"] * p
    row_totals = (
        [spec.row_agg != "none"] + [False] * (q - 1) if indent else [spec.row_agg != "none"] * q
    )
    name = spec.family.agg_name
    col_tree = _tree(col_attrs, table.attributes, table.rows, everyone, col_totals, name)
    row_tree = _tree(row_attrs, table.attributes, table.rows, everyone, row_totals, name)
    return pivot_warning(table, len(_leaf_paths(col_tree)), row_tree, len(_leaf_paths(row_tree)))


def quick_warning(table: Relational) -> str:
    """``layout_warning`` from counts alone: the table is a full cross product, so each axis
    has the product of its codes' value counts as leaves, plus its totals."""
    spec = table.spec
    indent = spec.row_format != "new"
    warnings = []
    if indent and spec.row_agg != "top":
        warnings.append(" Contains NA! ")
    cols = math.prod(table.side_sizes[0]) + (1 if spec.col_agg == "right" else 0)
    rows = math.prod(table.side_sizes[1])
    if spec.row_agg != "none":
        rows += 1
    if indent:
        groups = len(
            {r[[a.name for a in table.attributes].index(table.row_names[0])] for r in table.rows}
        )
        rows += groups
    if cols < 2:
        warnings.append(" Only one column! ")
    if rows < 2:
        warnings.append(" Only one row! ")
    if len(table.rows) < 2:
        warnings.append(" Only one value! ")
    return "".join(warnings)


def pivot_warning(table: Relational, n_cols: int, row_tree: list[_Node], n_row_leaves: int) -> str:
    spec = table.spec
    indent = spec.row_format != "new"
    warnings = []
    # Outline rows without totals (indent with a row aggregate other than top) are empty: NA.
    outline = indent
    if outline and spec.row_agg != "top":
        warnings.append(" Contains NA! ")
    n_rows = n_row_leaves + (sum(1 for n in row_tree if not n.total) if outline else 0)
    if n_cols < 2:
        warnings.append(" Only one column! ")
    if n_rows < 2:
        warnings.append(" Only one row! ")
    if len(table.rows) < 2:
        # R would recycle a one-row table into nonsense; such a table is never kept here.
        warnings.append(" Only one value! ")
    return "".join(warnings)


def _render(table, col_tree, col_leaves, row_leaves, q, p, indent, cells) -> None:
    csv_lines: list[list[str]] = []
    html: list[str] = ['<table class="Table">']

    def th(css: str, label: str, rowspan: int = 1, colspan: int = 1) -> str:
        attrs = f' rowspan="{rowspan}"' if rowspan > 1 else ""
        attrs += f' colspan="{colspan}"' if colspan > 1 else ""
        return f'    <th class="{css}"{attrs}>{label or "&nbsp;"}</th>'

    # Column headers.
    level_nodes: list[list[_Node]] = [col_tree]
    for _ in range(1, p):
        level_nodes.append([c for n in level_nodes[-1] for c in n.children])
    for j, nodes in enumerate(level_nodes):
        html.append("  <tr>")
        if j == 0:
            html.append(th("RowHeader", "", p, q))
        line = [""] * q
        for node in nodes:
            html.append(th("ColumnHeader", node.label, 1, node.leaves))
            line.extend([node.label] + [""] * (node.leaves - 1))
        html.append("  </tr>")
        csv_lines.append(line)

    col_total = [any(n.total for n in path) for path in col_leaves]

    def body_line(path: list[_Node], first_of: list[bool], hide_first: bool) -> None:
        labels = []
        html.append("  <tr>")
        for j, node in enumerate(path):
            shown = first_of[j]
            label = node.label if shown and not (hide_first and j == 0) else ""
            labels.append(label)
            if shown:
                html.append(
                    th(
                        "RowHeader",
                        label,
                        node.leaves if not (hide_first and j == 0) else group_size[0],
                        1,
                    )
                )
        row_is_total = any(n.total for n in path)
        values = cells(path[-1].filters)
        for value, is_total in zip(values, col_total, strict=True):
            css = "Total" if row_is_total or is_total else "Cell"
            html.append(f'    <td class="{css}">{value}</td>')
        html.append("  </tr>")
        csv_lines.append(labels + values)

    group_size = [0]
    previous: list[_Node] | None = None
    for path in row_leaves:
        first_of = [previous is None or previous[j] is not path[j] for j in range(q)]
        top = path[0]
        if indent and not top.total and first_of[0]:
            # The outline row: the group label across the row headers, the group's totals.
            group_size[0] = top.leaves
            html.append("  <tr>")
            html.append(th("OutlineRowHeader", top.label, 1, q))
            values = cells(top.filters)
            html.extend(f'    <td class="OutlineCell">{v}</td>' for v in values)
            html.append("  </tr>")
            csv_lines.append([top.label] + [""] * (q - 1) + values)
        body_line(path, first_of, hide_first=indent and not top.total)
        previous = path
    html.append("</table>")
    table.hct_csv = "\n".join(",".join(f'"{c}"' for c in line) for line in csv_lines) + "\n"
    table.hct_table = "\n".join(html)


HCT_HTML_SUFFIX = (
    " </div><script>\n"
    "          // AUTOSCALING (fontsize determines cell dimensions, and so page width/height)\n"
    "          let tb = document.getElementsByClassName('Table');\n"
    "          let pr = document.getElementsByClassName('mytable');\n"
    "          \n"
    "          let cw = pr[0].clientWidth\n"
    "          let sw = pr[0].scrollWidth\n"
    "          let ch = pr[0].clientHeight\n"
    "          let sh = window.innerHeight\n"
    "          \n"
    "          for (i=1;i<100;i++){\n"
    "          let scale = (cw/sw) \n"
    "          tb[0].style.fontSize = (i*scale) + 'px'   \n"
    "          cw = pr[0].clientWidth\n"
    "          sw = pr[0].scrollWidth\n"
    "          ch = pr[0].clientHeight\n"
    "          sh = window.innerHeight \n"
    "          \n"
    "          if ((cw < sw)||(ch > sh)) { \n"
    "          let cnt = i-1\n"
    "          if (cnt == 0) cnt = 1\n"
    "          tb[0].style.fontSize = (cnt*scale) + 'px'\n"
    "          break\n"
    "          }\n"
    "          }\n"
    "          </script></body>\n"
)


def _html_prefix(border: bool) -> str:
    width, align, valign = ("1", "center", "center") if border else ("0", "left", "top")
    pad = " " * 12
    return (
        "<html><head><style>\n"
        f"{pad}Table {{\n"
        f"{pad}border: {width}px solid; \n"
        f"{pad}border-collapse: collapse;\n"
        f"{pad}}}\n"
        f"{pad}th, td {{\n"
        f"{pad}border: {width}px solid;\n"
        f"{pad}padding: 5px;\n"
        f"{pad}text-align: {align};\n"
        f"{pad}vertical-align: {valign};\n"
        f"{pad}}}\n"
        f"{pad}</style></head><body><div class='mytable'>"
    )


def hct_html(table: Relational) -> str:
    title = table.spec.family.value_name
    return _html_prefix(table.border) + f"<h1> {title} </h1>" + table.hct_table + HCT_HTML_SUFFIX
