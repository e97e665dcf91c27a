"""bench/render_performance.py renders the tables and the roofline figure
(docs/performance.png) from a gpu_bench.json without a GPU."""
import json
import pathlib
import struct
import subprocess
import sys
import zlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "render_performance.py"
COMMITTED = ROOT / "bench" / "results" / "gpu_bench_call12.json"

# The gpu_bench.py schema, two matmul shapes (one with peers) and a quantizer.
SMALL = {
    "gpu": "test GPU", "copy_TBps": 4.0,
    "rows": [
        {"case": "mm_m1_n4096_k4096", "kind": "matmul", "variant": "decode_w4a16",
         "us": 8.0, "bytes": 8.4e6, "floor_us": 2.1, "m": 1, "n": 4096,
         "k": 4096, "tflops": 4.2, "cublas_graph_us": 14.5,
         "peers": {"bf16_us": 18.6, "triton_dot_scaled_us": 23.2,
                   "int4_tinygemm_us": 11.1}},
        {"case": "w4a4_m4096_n4096_k4096", "kind": "matmul",
         "variant": "prefill_w4a4_smem", "us": 514.4, "floor_us": 19.9,
         "m": 4096, "n": 4096, "k": 4096, "tflops": 267.0},
        {"case": "q_4096x4096", "kind": "quantize", "variant": "quantize_mxfp4",
         "us": 19.8, "bytes": 42.5e6, "tbps": 2.15, "pct_copy": 50.0},
        # Recipe rows (gpu_bench.py since issue 10): no bytes, a cost over
        # plain W4A4 of the same shape.
        {"case": "bench_plain_m1_n14336_k4096", "kind": "recipe",
         "recipe": "plain", "m": 1, "n": 14336, "k": 4096, "us": 20.4,
         "launches": 2, "variant": "decode_w4a4,quantize_mxfp4",
         "over_plain_pct": 0.0},
        {"case": "bench_full_m1_n14336_k4096", "kind": "recipe",
         "recipe": "full", "m": 1, "n": 14336, "k": 4096, "us": 24.8,
         "launches": 2, "variant": "activation_prep,decode_w4a16_epilogue_tail",
         "over_plain_pct": 21.7},
        {"case": "bench_full_m16_n14336_k4096", "kind": "recipe",
         "recipe": "full", "m": 16, "n": 14336, "k": 4096, "us": 40.4,
         "launches": 2, "variant": "activation_prep,decode_w4a16_wgmma_patch",
         "over_plain_pct": 46.8},
    ],
}


def check_png(path):
    """A PNG whose chunks all pass their CRC, with a non-empty image."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks = 8, []
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert zlib.crc32(kind + body) == crc, f"bad CRC in {kind} chunk"
        chunks.append((kind, body))
        pos += 12 + length
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert width >= 400 and height >= 200
    assert any(kind == b"IDAT" for kind, _ in chunks)


def render(json_path, png, *extra):
    return subprocess.run([sys.executable, str(SCRIPT), str(json_path),
                           *extra, "--plot", str(png)],
                          capture_output=True, text=True, check=True).stdout


def test_small_json_renders_tables_and_png(tmp_path):
    src = tmp_path / "gpu_bench.json"
    src.write_text(json.dumps(SMALL))
    png = tmp_path / "out" / "performance.png"
    png.parent.mkdir()
    text = render(src, png)
    check_png(png)
    assert "| mm_m1_n4096_k4096 (1x4096x4096) | decode_w4a16 | 8.0 | 2.1 |" in text
    # best peer / ours: torch int4 11.1 us against 8.0 us.
    assert "| 1.39x | 4 |" in text
    assert "| q_4096x4096 | quantize_mxfp4 | 19.8 | 42.5 MB | 2.15 | 50% |" in text
    # A case no peer runs has no ratio (not 0.00x).
    assert ("| w4a4_m4096_n4096_k4096 (4096x4096x4096) | prefill_w4a4_smem |"
            " 514.4 | 19.9 | 25.85x | - | - | - | - | - | 267 |") in text
    # The recipes: one row each, a column per shape, missing cells "-".
    assert ("| recipe, us (over plain W4A4) | 1 x 14336 x 4096 |"
            " 16 x 14336 x 4096 |") in text
    assert "| plain | 20.4 | - |" in text
    assert "| full | 24.8 (+22%) | 40.4 (+47%) |" in text


def test_committed_run_renders(tmp_path):
    """docs/performance.png's source until session 22: the reconstructed
    call-12 JSON says where its numbers come from and renders."""
    data = json.loads(COMMITTED.read_text())
    assert "docs/Performance.md" in data["source"]
    png = tmp_path / "performance.png"
    text = render(COMMITTED, png)
    check_png(png)
    assert "4096x4096x4096" in text
    check_png(ROOT / "docs" / "performance.png")


def test_no_matmul_rows_is_an_error(tmp_path):
    src = tmp_path / "gpu_bench.json"
    src.write_text(json.dumps({**SMALL, "rows": SMALL["rows"][2:]}))
    proc = subprocess.run([sys.executable, str(SCRIPT), str(src), "--plot",
                           str(tmp_path / "p.png")], capture_output=True,
                          text=True)
    assert proc.returncode != 0
    assert "no matmul rows to plot" in proc.stderr


def test_latest_run_renders(tmp_path):
    """docs/performance.png's source since session 22: the H100 run's
    gpu_bench.json as it came back, recipe rows included."""
    src = ROOT / "docs" / "perf" / "s22" / "s21f_gpu_bench.json"
    png = tmp_path / "performance.png"
    text = render(src, png)
    check_png(png)
    assert "GPU: NVIDIA H100 80GB HBM3" in text
    assert "| full | 24.8 (+22%) | 40.4 (+47%) | 629.5 (+48%) |" in text


def run_bad(tmp_path, content, *extra):
    src = tmp_path / "gpu_bench.json"
    src.write_text(content)
    return subprocess.run([sys.executable, str(SCRIPT), str(src), *extra],
                          capture_output=True, text=True)


def test_bad_inputs_get_a_message_not_a_traceback(tmp_path):
    cases = [
        ('{"gpu": ', "not a gpu_bench.json (invalid JSON"),
        ("[1, 2]", "the top level is not an object"),
        ('{"gpu": "g", "rows": []}', "no 'copy_TBps'"),
        ('{"gpu": "g", "copy_TBps": 0, "rows": []}',
         "'copy_TBps' must be a positive number"),
        ('{"gpu": "g", "copy_TBps": 3, "rows": {}}', "'rows' is not a list"),
        ('{"gpu": "g", "copy_TBps": 3, "rows": [{"case": "x"}]}',
         "row 0 has no 'kind'"),
        (json.dumps({"gpu": "g", "copy_TBps": 3, "rows": [
            {"case": "mm", "kind": "matmul", "variant": "v", "us": 1.0,
             "m": 1, "n": 2, "k": 3, "tflops": 1.0}]}),
         "row 0 (mm, kind matmul) lacks floor_us"),
        (json.dumps({"gpu": "g", "copy_TBps": 3, "rows": [
            {"case": "r", "kind": "recipe", "recipe": "full", "m": 1,
             "n": 2, "k": 3}]}),
         "row 0 (r, kind recipe) lacks us"),
    ]
    for content, message in cases:
        r = run_bad(tmp_path, content)
        assert r.returncode != 0, content
        assert "Traceback" not in r.stderr, r.stderr
        assert message in r.stderr, (content, r.stderr)
        assert str(tmp_path / "gpu_bench.json") in r.stderr
    r = subprocess.run([sys.executable, str(SCRIPT),
                        str(tmp_path / "missing.json")],
                       capture_output=True, text=True)
    assert r.returncode != 0 and "cannot read it" in r.stderr
    assert "Traceback" not in r.stderr
    ok = json.dumps(SMALL)
    r = run_bad(tmp_path, ok, str(tmp_path / "no-ptxas.txt"))
    assert r.returncode != 0 and "no-ptxas.txt: no such file" in r.stderr


def test_unknown_row_kinds_are_left_out_with_a_note(tmp_path):
    data = dict(SMALL, rows=SMALL["rows"] + [
        {"case": "future", "kind": "attention", "us": 1.0}])
    r = run_bad(tmp_path, json.dumps(data))
    assert r.returncode == 0, r.stderr
    assert "row 6 (future) of kind 'attention' is left out" in r.stderr
    assert "| mm_m1_n4096_k4096 (1x4096x4096) |" in r.stdout
