"""The HTML report (conformance/report/html.py): graph signatures parsed and laid out, text
escaped, and the page as a real headless Chromium draws it (CI installs /usr/bin/chromium;
without it the browser tests are skipped)."""

from __future__ import annotations

import re
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from conformance.report import files as report
from conformance.report import html as html_report
from conformance.report import records as report_records
from conformance.report import status_line
from conformance.report.hit_rates import HitRates

CHROMIUM = Path("/usr/bin/chromium")
ENGINE = "tests.conformance.engine_wrong_exp"  # report.write imports it (its version)
WIDTH, HEIGHT = 1280, 1600
# The matrix cells' and the graph mark's colours (the template's --pass, --fail, --skip and
# --mark).
PASS_RGB, FAIL_RGB, SKIP_RGB, MARK_RGB = (201, 236, 208), (248, 196, 196), (226, 226, 226), (
    214, 39, 40)

TORCH_GRAPH = "AddBackward0(MulBackward0(AccumulateGrad, None), MulBackward0(#2, None))"
ENGINE_GRAPH = ("AddBackward0(MulBackward0(AccumulateGrad, None), "
                "MulBackward0(AccumulateGrad, None))")
NASTY = "</script><img src=x onerror=alert(1)> & <!-- \u2028"
PROGRAM = ("x = torch.rand(3, requires_grad=True)\n"
           "y = x * x\n"
           "z = y + x * 2\n"
           f"assert_close(z, z)  # {NASTY}\n")


SOURCE_URL = "https://github.com/pytorch/pytorch/blob/main/x.py?a=1&b=2"
LOAD_ERROR = {  # as the loader's records are: no device, no dtype (empty, not null)
    "id": "cases/f/broken.yaml", "file": "cases/f/broken.yaml", "line": 8,
    "message": "syntax error: '(' was never closed\n  fix: close it", "features": ["unknown"],
    "device": "", "dtype": "", "engine": None, "verdict": "error", "pytest_outcome": "failed",
    "reason": "cases/f/broken.yaml:8: syntax error: '(' was never closed"}


def records() -> list[dict]:
    base = {"file": "cases/f/x.yaml", "engine": ENGINE, "pytest_outcome": "passed",
            "reason": "", "divergence": None, "message_divergence": None}
    mul = {**base, "file": "cases/ops/mul.yaml", "id": "cases/ops/mul.yaml::cpu-float32",
           "features": ["ops"], "device": "cpu", "dtype": "float32", "verdict": "diverges",
           "pytest_outcome": "failed", "description": "mul's graph",
           "divergence": {"line": 8, "statement": "z = y + x * 2", "field": "z.values",
                          "torch": [1.0, -0.0, float("nan")], "engine": [1.0, 0.0, NASTY],
                          "strict": False,
                          "graphs": {"torch": TORCH_GRAPH, "engine": ENGINE_GRAPH}},
           "report": f"mul diverges {NASTY}",
           "repro": f"pytest cases/ops/mul.yaml::cpu-float32 --engine {ENGINE}",
           "program": PROGRAM, "program_first_line": 6}
    return [
        {**base, "id": "cases/ops/exp.yaml::cpu-float32", "features": ["ops", "grad_fn"],
         "device": "cpu", "dtype": "float32", "verdict": "pass",
         "description": "exp and its grad", "source": SOURCE_URL},
        mul,
        # the same failure in float64: one entry in the page, naming both dtypes
        {**mul, "id": "cases/ops/mul.yaml::cpu-float64", "dtype": "float64",
         "repro": f"pytest cases/ops/mul.yaml::cpu-float64 --engine {ENGINE}"},
        # a failure with a divergence but neither graphs nor program (as known ones have)
        {**base, "id": "cases/hooks/h.yaml::cpu-float32", "features": ["hooks"],
         "device": "cpu", "dtype": "float32", "verdict": "case_disagrees_with_torch",
         "pytest_outcome": "failed", "reason": "Traceback <b>boom</b>",
         "description": "a hook", "source": "javascript:alert(1)",
         "divergence": {"line": 3, "statement": "h()", "field": "outcome.status",
                        "torch": "ok", "engine": "raises RuntimeError", "strict": True,
                        "graphs": None}},
        {**base, "id": "cases/ops/exp.yaml::cuda-float32", "features": ["ops", "grad_fn"],
         "device": "cuda", "dtype": "float32", "verdict": "skipped",
         "pytest_outcome": "skipped", "reason": "cuda is not available"},
        {**base, "id": "cases/ops/exp.yaml::cuda-float64", "features": ["ops", "grad_fn"],
         "device": "cuda", "dtype": "float64", "verdict": "pass"},
        LOAD_ERROR,
    ]
STATUS = ("FAIL: 2 diverges, 1 case_disagrees_with_torch, 1 error (1 file failed to load), "
          "2 pass, 1 skipped of 6 collected; 6 executed")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("report")
    hits = HitRates()
    hits.record({"feature:ops", "completed_backward"})
    hits.record({"feature:ops"})
    report.write(directory, records(), engine=ENGINE, started=report.now(), profile="ci",
                 generated=hits)
    page = directory / "index.html"
    assert page.exists()
    return page


# ---- without a browser ------------------------------------------------------------------

def test_signature_parses_into_a_dag() -> None:
    g = html_report.parse_graph("AddBackward0(MulBackward0(AccumulateGrad, None), "
                                "UnbindBackward0@1, #1@2, ...)")
    labels = [n.label for n in g.nodes]
    assert labels == ["AddBackward0", "MulBackward0", "AccumulateGrad", "None",
                      "UnbindBackward0", "..."]
    root = g.nodes[0]
    children = [(g.edges[e].child, g.edges[e].output) for e in root.children]
    # `#1` is the second node visited (MulBackward0): an edge back to it, not a new node
    assert children == [(1, 0), (4, 1), (1, 2), (5, 0)]
    assert [n.kind for n in g.nodes].count("none") == 1
    assert g.nodes[5].kind == "truncated"


@pytest.mark.parametrize("bad", ["", "A(", "A(B C)", "A(#3)", "A(B)x", "A@"])
def test_malformed_signature_is_rejected_and_shown_as_text(bad: str) -> None:
    with pytest.raises(ValueError):
        html_report.parse_graph(bad)
    assert html_report.draw_pair(bad, "A")["status"] == "unparsed"


def test_first_difference_is_marked_in_both_drawings() -> None:
    drawn = html_report.draw_pair(TORCH_GRAPH, ENGINE_GRAPH)
    assert drawn["status"] == "differ"
    # torch reuses its AccumulateGrad (#2); the engine has a second one: that edge differs
    marked_torch = [n["label"] for n in drawn["torch"]["nodes"] if n["marked"]]
    marked_engine = [n for n in drawn["engine"]["nodes"] if n["marked"]]
    assert marked_torch == ["AccumulateGrad"]
    assert [n["label"] for n in marked_engine] == ["AccumulateGrad"]
    assert marked_engine[0]["visit"] == 4  # the engine's second, distinct AccumulateGrad
    assert sum(e["marked"] for e in drawn["torch"]["edges"]) == 1
    assert html_report.draw_pair(TORCH_GRAPH, TORCH_GRAPH)["status"] == "identical"
    one_sided = html_report.draw_pair(TORCH_GRAPH, None)
    assert one_sided["engine"] is None and one_sided["torch"]["nodes"][0]["marked"]


def test_layout_puts_every_edge_downwards() -> None:
    lay = html_report.layout(html_report.parse_graph(TORCH_GRAPH), None)
    assert all(e["y2"] > e["y1"] for e in lay["edges"])
    assert all(n["x"] >= 0 and n["x"] + n["w"] <= lay["width"] for n in lay["nodes"])


def test_text_is_escaped_and_values_keep_their_form(built: Path) -> None:
    page = built.read_text()
    assert NASTY not in page and "<img" not in page and "</script><" not in page
    assert page.count("</script>") == 2  # the data blob's and the code's own
    assert "NaN" not in page.split('id="report-data">')[1].split("</script>")[0]
    shown = html_report.display([1.0, -0.0, float("nan"), float("inf"), True, None, "s"])
    assert shown == ["1.0", "-0.0", "nan", "inf", "True", "None", "s"]


# ---- in a browser ------------------------------------------------------------------------

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.exists(),
    reason="/usr/bin/chromium is not installed (CI installs it: apt-get install -y chromium)")


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / "chromium-profile"
    return subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=120, check=False)


def decode_png(data: bytes) -> tuple[int, int, list[bytearray], int]:
    """(width, height, rows of unfiltered bytes, bytes per pixel) of an 8-bit RGB/RGBA,
    non-interlaced PNG: what Chromium writes."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
    bpp = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                row[i] = (row[i] + row[i - bpp]) & 0xFF
        elif kind == 2:
            row = bytearray((a + b) & 0xFF for a, b in zip(row, prev, strict=True))
        elif kind == 3:
            for i in range(stride):
                left = row[i - bpp] if i >= bpp else 0
                row[i] = (row[i] + ((left + prev[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0
                b, c = prev[i], prev[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else c
                row[i] = (row[i] + pred) & 0xFF
        rows.append(row)
        prev = row
    return width, height, rows, bpp


@needs_chromium
def test_screenshot_shows_the_matrix_and_the_marked_graph(built: Path, tmp_path: Path
                                                          ) -> None:
    png = tmp_path / "report.png"
    done = chromium(tmp_path, f"--screenshot={png}", f"--window-size={WIDTH},{HEIGHT}",
                    built.as_uri())
    assert png.exists(), done.stderr[-3000:]
    width, height, rows, bpp = decode_png(png.read_bytes())
    assert (width, height) == (WIDTH, HEIGHT)
    counts: dict[tuple[int, ...], int] = {}
    for row in rows:
        for x in range(0, len(row), bpp):
            pixel = tuple(row[x:x + 3])
            counts[pixel] = counts.get(pixel, 0) + 1
    assert len(counts) > 50, "the screenshot is (nearly) blank"
    for name, rgb in (("all-pass cell", PASS_RGB), ("failing cell", FAIL_RGB),
                      ("skipped cell", SKIP_RGB), ("graph mark", MARK_RGB)):
        assert counts.get(rgb, 0) > 100, f"no {name} colour {rgb} in the screenshot"


def dump_dom(tmp_path: Path, page: Path | str) -> str:
    uri = page.as_uri() if isinstance(page, Path) else page
    done = chromium(tmp_path, "--dump-dom", uri)
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-3000:]
    return done.stdout


@needs_chromium
def test_page_after_its_script_ran(built: Path, tmp_path: Path) -> None:
    dom = dump_dom(tmp_path, built)
    assert 'data-ready="1"' in dom, "the page's script did not finish"
    # the matrix as summary.md has it: same rows, same cells
    summary = (built.parent / "summary.md").read_text()
    expected = {line.split("|")[1].strip(" *"): [c.strip() for c in line.split("|")[2:-1]]
                for line in summary.splitlines()
                if line.startswith("| ") and not line.startswith("| feature")}
    # the last row counts each item once per column
    assert expected == {"grad_fn": ["1/1", "", "skipped", "1/1"], "hooks": ["0/1", "", "", ""],
                        "ops": ["1/2", "0/1", "skipped", "1/1"],
                        "total": ["1/3", "0/1", "skipped", "1/1"]}
    for feature, cells in expected.items():
        row = re.search(r'<tr class="total">(.*?)</tr>' if feature == "total" else
                        rf'<tr data-feature="{feature}">(.*?)</tr>', dom)
        assert row, f"no matrix row for {feature}"
        assert re.findall(r'<td class="cell[^"]*"[^>]*>([^<]*)</td>', row.group(1)) == cells
    assert 'class="cell some-fail"' in dom and 'class="cell all-pass"' in dom
    assert 'class="cell skipped"' in dom
    # the banner says what summary.md's first line says
    assert summary.splitlines()[0] == "**FAIL**: " + STATUS.split(": ", 1)[1]
    assert re.search(r'<div id="status" role="status" class="FAIL">([^<]*)</div>', dom)[1] \
        == STATUS.replace("&", "&amp;")
    # the file that failed to load: a card with its line and message, first of the failures
    assert "Failures (4), 3 distinct" in dom
    card = dom.split('data-id="cases/f/broken.yaml"')[1].split("</section>")[0]
    assert "cases/f/broken.yaml:8" in card and "was never closed" in card
    assert "failed to load" in card
    assert dom.index('data-id="cases/f/broken.yaml"') < dom.index('data-id="cases/ops/')
    # identical failures across dtypes are one entry naming them
    assert 'data-ids="cases/ops/mul.yaml::cpu-float32 cases/ops/mul.yaml::cpu-float64"' in dom
    assert "cases/ops/mul.yaml on cpu, dtypes float32, float64" in dom
    assert 'data-id="cases/ops/mul.yaml::cpu-float64"' not in dom
    # description and source: a link for an http(s) URL, text for anything else
    assert f'<a href="{SOURCE_URL.replace("&", "&amp;")}" rel="noopener noreferrer">' in dom
    assert "mul's graph" in dom and "exp and its grad" in dom
    assert "source: javascript:alert(1)" in dom and 'href="javascript' not in dom
    assert 'data-id="cases/hooks/h.yaml::cpu-float32"' in dom
    assert "Traceback &lt;b&gt;boom&lt;/b&gt;" in dom and '<p class="note">(not drawn' not in dom
    for name in ("feature", "device", "dtype", "verdict"):
        assert re.search(rf'<select id="filter-{name}">.*?<option', dom, re.S), name
    # the failure: program line highlighted, values side by side, repro, marked graph nodes
    card = dom.split('data-id="cases/ops/mul.yaml::cpu-float32"')[1]
    assert re.search(r'<div class="hl" data-line="8"><span class="ln">8</span>'
                     r'z = y \+ x \* 2</div>', card)
    assert "-0.0" in card and "<mark>nan</mark>" in card
    assert f"pytest cases/ops/mul.yaml::cpu-float32 --engine {ENGINE}" in card
    for side in ("torch", "engine"):
        svg = card.split(f'data-side="{side}"')[1].split("</svg>")[0]
        assert svg.count('class="node node diff"') == 1, side
        assert "AccumulateGrad" in svg
    # escaped: the hostile text shows as text, never as markup
    assert "&lt;img src=x onerror=alert(1)&gt;" in card and "<img" not in dom
    assert "Generated programs" in dom and "50.0%" in dom


@needs_chromium
def test_filters_from_the_url_fragment(built: Path, tmp_path: Path) -> None:
    dom = dump_dom(tmp_path, built.as_uri() + "#verdict=pass&device=cpu")
    assert "showing 1 of 7 items" in dom and "Failures (0)" in dom
    row = re.search(r'<tr data-feature="ops">(.*?)</tr>', dom)
    assert row and re.findall(r'<td class="cell[^"]*"[^>]*>([^<]*)</td>', row.group(1)) == [
        "1/1"]


@needs_chromium
def test_interrupted_run_and_a_device_where_nothing_ran(tmp_path: Path) -> None:
    directory = tmp_path / "report"
    skipped = {"file": "cases/ops/exp.yaml", "features": ["ops"], "engine": ENGINE,
               "verdict": "skipped", "pytest_outcome": "skipped",
               "reason": "cuda is not available to torch on this machine"}
    rows = [{**records()[0], "id": "cases/ops/exp.yaml::cpu-float32"},
            {**skipped, "id": "cases/cuda/only.yaml::cuda-float32", "device": "cuda",
             "dtype": "float32", "features": ["devices"]},
            *({**skipped, "id": f"cases/ops/exp.yaml::cuda-{t}", "device": "cuda", "dtype": t}
              for t in ("float32", "float64"))]
    facts = status_line.RunFacts(collected=5, executed=3, interrupted=True,
                                interruption="KeyboardInterrupt", exit_status=2)
    report.write(directory, rows, engine=ENGINE, started=report.now(), profile="ci",
                 generated=HitRates(), run=facts)
    summary = (directory / "summary.md").read_text()
    assert summary.startswith("**INCOMPLETE**: 1 pass, 3 skipped of 5 collected; 3 executed; "
                              "interrupted (KeyboardInterrupt); pytest exit status 2\n")
    # summary.md leaves out the columns of a device where nothing ran, as the page does
    assert "| feature | cpu float32 |\n|---|---|\n| grad_fn | 1/1 |\n| ops | 1/1 |\n" \
        "| **total** | 1/1 |\n" in summary
    assert ("Columns not shown: cuda: nothing could run (3 items skipped: cuda is not "
            "available to torch on this machine). Features only they have: devices.") in summary
    dom = dump_dom(tmp_path, directory / "index.html")
    assert re.search(r'<div id="status" role="status" class="INCOMPLETE">INCOMPLETE: ', dom)
    row = re.search(r'<tr data-feature="ops">(.*?)</tr>', dom)
    assert row and re.findall(r'<td class="cell[^"]*"[^>]*>([^<]*)</td>', row.group(1)) == [
        "1/1"]
    assert "<th>cuda float32</th>" not in dom
    assert ("cuda: nothing could run (3 items skipped: cuda is not available to torch on this "
            "machine)") in dom
    # a feature only cuda had has no (empty) row, and the note names it
    assert '<tr data-feature="devices">' not in dom
    assert "Features only the hidden columns have: devices." in dom
    # chosen in the filter, the hidden device's columns are there
    dom = dump_dom(tmp_path, (directory / "index.html").as_uri() + "#device=cuda")
    assert "<th>cuda float32</th>" in dom and '<tr data-feature="devices">' in dom


@needs_chromium
def test_page_requests_nothing(built: Path, tmp_path: Path) -> None:
    page = built.read_text()
    for pattern in (r'\b(?:src|href|srcset|action)\s*=\s*["\']?\s*(?:https?:)?//',
                    r"url\(\s*['\"]?\s*(?:https?:)?//", r"@import", r"<link\b",
                    r"<(?:iframe|object|embed|img)\b", r"<script\b[^>]*\bsrc="):
        assert not re.search(pattern, page, re.I), pattern
    # after the script ran: no resource was fetched (or attempted) by anything on the page
    probe = tmp_path / "probe.html"
    probe.write_text(page.replace(
        "</body>", "<script>document.body.setAttribute('data-resources', "
        "performance.getEntriesByType('resource').map((e) => e.name).join(' ') || 'none')"
        "</script></body>"))
    dom = dump_dom(tmp_path, probe)
    assert 'data-resources="none"' in dom
    # an <a href> is a link the reader may follow, not a load; nothing else may point out
    assert not re.search(r'\bsrc="(?:https?:)?//', dom)
    assert not re.search(r'<(?!a )[a-z]+ [^>]*\bhref="(?:https?:)?//', dom)


@needs_chromium
def test_a_generated_programs_failure_is_a_card_like_a_cases(tmp_path: Path) -> None:
    from conformance.case.language import parse
    from conformance.gen.program_check import check
    from conformance.report import generated as generated_report
    from conformance.run.runner import torch_engine
    from tests.conformance.wrong_engines import WRONG_EXP

    checked = check(parse("a = torch.tensor([1.0, 2.0], requires_grad=True)\n"
                          "b = torch.exp(a)\n"), WRONG_EXP, torch_engine())
    headline, details, fields = generated_report.divergence(
        checked, ENGINE, "description: the case\nprogram: |\n  b = torch.exp(a)\n",
        "found/divergence.yaml")
    nodeid = "conformance/generated_suite.py::test_generated_programs_agree_with_torch"
    repro = "pytest --generated-programs -k generated_suite --hypothesis-profile ci"
    record = report_records.generated_record(
        nodeid, ENGINE, "failed", "\n".join([headline, *details]), verdict="diverges",
        fields=fields, repro=repro)
    report.write(tmp_path / "report", [record], engine=ENGINE, started=report.now(),
                 profile="ci", generated=HitRates())
    dom = dump_dom(tmp_path, tmp_path / "report" / "index.html")
    card = dom.split(f'data-id="{nodeid}"')[1].split("</section>")[0]
    # the program with the divergent line marked, the divergence, the graphs, the repro
    assert re.search(r'<div class="hl" data-line="2"><span class="ln">2</span>'
                     r'b = torch.exp\(a\)</div>', card)
    assert "First divergence" in card and "<code>b.values</code>" in card
    assert "<mark>2.7182817459106445</mark>" in card  # torch's value, marked as differing
    assert "identical in both engines" in card and card.count("ExpBackward0</text>") == 2
    assert f"<pre>{repro}</pre>" in card
    assert "As a YAML case (saved to found/divergence.yaml)" in card
    assert "description: the case" in card
