"""The libFuzzer driver's attribution (tools/fp4-fuzz/libfuzzer_run.py):
what counts as an upstream MLIR crash and what fails the project."""

import os
import shutil
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools", "fp4-fuzz"))
import libfuzzer_run  # noqa: E402

MLIR = "(/usr/lib/llvm-22/lib/libMLIR.so.22.1+0x{:x})"
OURS = "(/build/bin/fp4fuzz-op-parser+0x{:x})"


def asan_log(frames):
    lines = ["==1==ERROR: AddressSanitizer: SEGV on unknown address 0x0"]
    for i, (symbol, module) in enumerate(frames):
        where = f"in {symbol} " if symbol else " "
        lines.append(f"    #{i} 0x7f00{i:08x} {where}{module.format(i)}")
    return "\n".join(lines)


# The shape of the CI finding of 2026-12-01: linalg.transpose's parser.
UPSTREAM_PARSER = [
    ("mlir::Attribute::getContext() const", MLIR),
    (None, MLIR),
    ("mlir::linalg::TransposeOp::parse(mlir::OpAsmParser&, mlir::OperationState&)", MLIR),
    ("mlir::parseAsmSourceFile(llvm::SourceMgr const&)", MLIR),
    ("mlir::parseSourceString(llvm::StringRef, mlir::Block*)", MLIR),
    ("parseSourceString<mlir::ModuleOp> /usr/lib/llvm-22/include/mlir/Parser/Parser.h:249:14", ""),
    ("LLVMFuzzerTestOneInput tools/fp4-fuzz/libfuzzer/OpParserFuzzer.cpp:38:7", ""),
]


def test_crash_in_upstream_parser_is_upstream():
    assert libfuzzer_run.crash_in_upstream_parser(asan_log(UPSTREAM_PARSER))


def test_fp4_frame_in_the_parser_is_a_finding():
    frames = list(UPSTREAM_PARSER)
    frames[1] = ("mlir::fp4::NVFP4Attr::parse(mlir::AsmParser&, mlir::Type) "
                 "lib/Dialect/FP4/IR/NVFP4Attr.cpp:40:3", OURS)
    assert not libfuzzer_run.crash_in_upstream_parser(asan_log(frames))


def test_crash_outside_the_parser_is_a_finding():
    # A crash while printing or verifying (after the parse returned).
    frames = [("mlir::Attribute::getContext() const", MLIR),
              ("mlir::OpState::print(mlir::Operation*)", MLIR),
              ("LLVMFuzzerTestOneInput tools/fp4-fuzz/libfuzzer/OpParserFuzzer.cpp:44:7", "")]
    assert not libfuzzer_run.crash_in_upstream_parser(asan_log(frames))


# The shape of the CI finding of 2026-12-05: linalg.dot's parser reaching
# report_fatal_error (an abort, so the stack starts with the sanitizer's,
# libFuzzer's and libc's handler frames).
HANDLER = [
    ("__sanitizer_print_stack_trace", OURS),
    ("fuzzer::PrintStackTrace() crtstuff.c", ""),
    ("fuzzer::Fuzzer::CrashCallback() crtstuff.c", ""),
    (None, "(/lib/x86_64-linux-gnu/libc.so.6+0x{:x}) (BuildId: 93ac61ec)"),
    ("__pthread_kill_implementation nptl/pthread_kill.c:43:17", ""),
    ("raise signal/../sysdeps/posix/raise.c:26:13", ""),
    ("abort stdlib/abort.c:79:7", ""),
]
FATAL_IN_PARSER = HANDLER + [
    ("llvm::report_fatal_error(llvm::Twine const&, bool)",
     "(/usr/lib/llvm-22/lib/libLLVM.so.22.1+0x{:x})"),
    ("mlir::NamedAttrList::NamedAttrList(mlir::DictionaryAttr)", MLIR),
    ("mlir::linalg::DotOp::parse(mlir::OpAsmParser&, mlir::OperationState&)", MLIR),
] + UPSTREAM_PARSER[3:]


def test_abort_in_upstream_parser_is_upstream():
    assert libfuzzer_run.crash_in_upstream_parser(asan_log(FATAL_IN_PARSER))


def test_abort_with_fp4_frame_is_a_finding():
    frames = list(FATAL_IN_PARSER)
    i = len(HANDLER) + 1
    frames[i] = ("mlir::fp4::NVFP4Attr::parse(mlir::AsmParser&, mlir::Type) "
                 "lib/Dialect/FP4/IR/NVFP4Attr.cpp:40:3", OURS)
    assert not libfuzzer_run.crash_in_upstream_parser(asan_log(frames))


def test_abort_in_the_harness_is_a_finding():
    # fp4fuzz::fail aborts from the harness itself: nothing above it.
    frames = HANDLER + [
        ("fp4fuzz::fail(char const*, std::string const&, std::string const&)",
         OURS),
        ("LLVMFuzzerTestOneInput tools/fp4-fuzz/libfuzzer/OpParserFuzzer.cpp:44:7", "")]
    assert not libfuzzer_run.crash_in_upstream_parser(asan_log(frames))


def test_no_stack_is_a_finding():
    assert not libfuzzer_run.crash_in_upstream_parser("==1==ERROR: LeakSanitizer")


def test_executed_count():
    assert libfuzzer_run.executed("stat::number_of_executed_units: 31972\n") == 31972
    assert libfuzzer_run.executed("no stats") == 0


@pytest.mark.skipif(not os.path.isfile("/usr/lib/llvm-22/bin/mlir-opt"),
                    reason="stock mlir-opt (llvm-22) not installed")
def test_stock_mlir_opt_does_not_crash_on_bad_but_diagnosed_input():
    text = "func.func @f() {\n  %0 = fp4.quantize %x : tensor<4xf32>\n}\n"
    assert not libfuzzer_run.stock_crashes("/usr/lib/llvm-22/bin/mlir-opt", text)
    assert not libfuzzer_run.stock_crashes(None, text)
