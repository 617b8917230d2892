#!/usr/bin/python3
"""Tests of schmp-trace on small traces whose figures are known by hand.

Usage: test_schmp_trace.py PATH/TO/schmp-trace [unittest arguments, e.g. a test class name]

Most tests run the script as a program (as a user would) and read its tables; the figure tests load it
as a module to look inside the plot it builds.
"""

import importlib.machinery
import importlib.util
import math
import os
import struct
import subprocess
import sys
import tempfile
import unittest

SCRIPT = None  # set from the command line in __main__

SPLIT_HEADER = "scheduler_s,compute_s,communication_s,idle_s"

# Minimising, fast. Final split 0.4 + 1.0 + 0.4 + 0.2 = 2.0 s: 20%, 50%, 20%, 10%.
FAST = f"""round,seconds,objective,nnz,{SPLIT_HEADER}
0,0.100000,10,0,0.000000,0.050000,0.000000,0.000000
10,0.500000,6,3,0.100000,0.200000,0.050000,0.050000
20,1.000000,4,5,0.200000,0.500000,0.200000,0.100000
30,2.000000,3,5,0.400000,1.000000,0.400000,0.200000
"""

# Minimising, slow, never below 4.5. Final split 0.5 + 2.5 + 0.5 + 0.5 = 4.0 s: 12.5%, 62.5%, 12.5%, 12.5%.
SLOW = f"""round,seconds,objective,nnz,{SPLIT_HEADER}
0,0.200000,10,0,0.000000,0.100000,0.000000,0.000000
5,1.000000,7,2,0.100000,0.600000,0.100000,0.100000
10,2.000000,5,4,0.200000,1.200000,0.300000,0.200000
15,4.000000,4.5,4,0.500000,2.500000,0.500000,0.500000
"""

# Maximising (LDA-like: log-likelihood per token rises), with nan in an app column at round 0.
LDA_A = f"""round,seconds,objective,iteration,held_out_perplexity,{SPLIT_HEADER}
0,0.010000,-16.5,0,nan,0.000000,0.010000,0.000000,0.000000
10,0.500000,-12,10,900.5,0.000001,0.450000,0.040000,0.000001
20,1.000000,-11,20,850.25,0.000002,0.900000,0.080000,0.000002
"""
LDA_B = f"""round,seconds,objective,iteration,held_out_perplexity,{SPLIT_HEADER}
0,0.020000,-16.5,0,nan,0.000000,0.020000,0.000000,0.000000
10,0.600000,-13,10,950,0.000001,0.550000,0.040000,0.000001
20,1.500000,-11.5,20,870,0.000002,1.400000,0.090000,0.000002
"""

# One evaluation only.
SINGLE = f"""round,seconds,objective,{SPLIT_HEADER}
7,0.250000,2.5,0.050000,0.150000,0.025000,0.025000
"""

# nan objectives: the first row (not evaluated yet) and the last one.
NAN_OBJECTIVE = f"""round,seconds,objective,{SPLIT_HEADER}
0,0.100000,nan,0,0,0,0
1,0.200000,5,0,0.1,0,0
2,0.300000,4,0,0.2,0,0
3,0.400000,nan,0,0.3,0,0
"""

# A peer's trace (tomotopy in bench/): no time split columns.
NO_SPLIT = """round,seconds,objective
10,0.500000,8
20,1.500000,6
"""


def write(directory, name, text):
    path = os.path.join(directory, name)
    with open(path, "w") as file:
        file.write(text)
    return path


def run_tool(*arguments):
    return subprocess.run([SCRIPT, *arguments], capture_output=True, text=True, timeout=60)


def line_of(output, label):
    """The whitespace-separated cells of the output line for run `label` (without a "(baseline)" mark)."""
    for line in output.splitlines():
        cells = line.split()
        if cells and cells[0] == label:
            return [cell for cell in cells[1:] if cell != "(baseline)"]
    raise AssertionError(f"no line for {label!r} in:\n{output}")


def section(output, first_words):
    """The output from the line starting with `first_words` on."""
    lines = output.splitlines()
    for position, line in enumerate(lines):
        if line.startswith(first_words):
            return "\n".join(lines[position:])
    raise AssertionError(f"no line starting {first_words!r} in:\n{output}")


def load_module():
    # No __pycache__ beside the script in the source tree.
    sys.dont_write_bytecode = True
    loader = importlib.machinery.SourceFileLoader("schmp_trace", SCRIPT)
    spec = importlib.util.spec_from_loader("schmp_trace", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class TraceTestCase(unittest.TestCase):
    def setUp(self):
        self.directory_object = tempfile.TemporaryDirectory(prefix="schmp-trace-test-")
        self.directory = self.directory_object.name
        self.addCleanup(self.directory_object.cleanup)

    def trace(self, name, text):
        return write(self.directory, name, text)

    def run_ok(self, *arguments):
        result = run_tool(*arguments)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(result.stderr, "")
        return result.stdout


class SummaryTest(TraceTestCase):
    def test_figures_of_two_minimising_runs(self):
        fast = self.trace("fast.trace.csv", FAST)
        slow = self.trace("slow.csv", SLOW)
        output = self.run_ok("summary", fast, slow)
        self.assertIn("direction: minimising (inferred: the objective falls)", output)
        # run, rounds (last round), seconds (last row), final objective, best objective
        self.assertEqual(line_of(output, "fast"), ["30", "2.000000", "3", "3"])
        self.assertEqual(line_of(output, "slow"), ["15", "4.000000", "4.5", "4.5"])
        split = section(output, "time split")
        self.assertEqual(line_of(split, "fast"),
                         ["0.400000", "20.0%", "1.000000", "50.0%", "0.400000", "20.0%", "0.200000", "10.0%"])
        self.assertEqual(line_of(split, "slow"),
                         ["0.500000", "12.5%", "2.500000", "62.5%", "0.500000", "12.5%", "0.500000", "12.5%"])

    def test_labels_replace_file_names(self):
        output = self.run_ok("summary", self.trace("fast.csv", FAST), self.trace("slow.csv", SLOW),
                             "--labels", "np2,single")
        self.assertEqual(line_of(output, "np2")[:2], ["30", "2.000000"])
        self.assertEqual(line_of(output, "single")[:2], ["15", "4.000000"])
        self.assertNotIn("fast", output)

    def test_same_file_name_in_two_directories_gets_the_directory(self):
        for run in ("run1", "run2"):
            os.mkdir(os.path.join(self.directory, run))
        first = write(os.path.join(self.directory, "run1"), "a.trace.csv", FAST)
        second = write(os.path.join(self.directory, "run2"), "a.trace.csv", SLOW)
        output = self.run_ok("summary", first, second)
        self.assertEqual(line_of(output, "run1/a")[0], "30")
        self.assertEqual(line_of(output, "run2/a")[0], "15")

    def test_directories_of_the_same_name_get_theirs_too(self):
        paths = []
        for top, text in (("d1", FAST), ("d2", SLOW)):
            os.makedirs(os.path.join(self.directory, top, "run"))
            paths.append(write(os.path.join(self.directory, top, "run"), "a.csv", text))
        output = self.run_ok("summary", *paths)
        self.assertEqual(line_of(output, "d1/run/a")[0], "30")
        self.assertEqual(line_of(output, "d2/run/a")[0], "15")
        # Names that differ only in their suffix, side by side: their whole paths tell them apart.
        plain = self.trace("x.csv", FAST)
        suffixed = self.trace("x.trace.csv", SLOW)
        output = self.run_ok("summary", plain, suffixed)
        self.assertEqual(line_of(output, plain)[0], "30")
        self.assertEqual(line_of(output, suffixed)[0], "15")

    def test_single_row_trace(self):
        output = self.run_ok("summary", self.trace("single.csv", SINGLE))
        self.assertIn("direction: minimising (default: no run shows a trend)", output)
        self.assertEqual(line_of(output, "single"), ["7", "0.250000", "2.5", "2.5"])
        # 0.05 + 0.15 + 0.025 + 0.025 = 0.25 s
        self.assertEqual(line_of(section(output, "time split"), "single"),
                         ["0.050000", "20.0%", "0.150000", "60.0%", "0.025000", "10.0%", "0.025000", "10.0%"])

    def test_nan_objectives_are_not_best_but_can_be_final(self):
        output = self.run_ok("summary", self.trace("nan.csv", NAN_OBJECTIVE))
        self.assertIn("minimising (inferred", output)
        self.assertEqual(line_of(output, "nan"), ["3", "0.400000", "nan", "4"])
        # compute only: 100%; the zero parts 0%
        self.assertEqual(line_of(section(output, "time split"), "nan"),
                         ["0.000000", "0.0%", "0.300000", "100.0%", "0.000000", "0.0%", "0.000000", "0.0%"])

    def test_trace_without_time_split(self):
        output = self.run_ok("summary", self.trace("peer.csv", NO_SPLIT))
        self.assertEqual(line_of(output, "peer"), ["20", "1.500000", "6", "6"])
        self.assertEqual(line_of(section(output, "time split"), "peer"), ["-", "-", "-", "-"])

    def test_busiest_scheduler_as_a_share_of_the_solve(self):
        busy = (f"round,seconds,objective,{SPLIT_HEADER},scheduler_busy_s\n"
                "0,0.100000,5,0,0.1,0,0,0.000000\n"
                "8,2.000000,4,0.2,1.5,0.2,0.1,0.500000\n")
        output = self.run_ok("summary", self.trace("busy.csv", busy), self.trace("fast.csv", FAST))
        # 0.5 s of the 2 s solve; a trace without the column has no row.
        table = section(output, "the busiest scheduler")
        self.assertEqual(line_of(table, "busy"), ["0.500000", "25.0%"])
        self.assertNotIn("fast", table)

    def test_all_zero_split_has_no_shares(self):
        zero = f"round,seconds,objective,{SPLIT_HEADER}\n0,0.000000,1,0,0,0,0\n"
        output = self.run_ok("summary", self.trace("zero.csv", zero))
        self.assertEqual(line_of(section(output, "time split"), "zero"),
                         ["0.000000", "-", "0.000000", "-", "0.000000", "-", "0.000000", "-"])


class CompareTest(TraceTestCase):
    def setUp(self):
        super().setUp()
        self.fast = self.trace("fast.trace.csv", FAST)
        self.slow = self.trace("slow.trace.csv", SLOW)

    def test_default_target_is_the_level_every_run_reaches(self):
        output = self.run_ok("compare", self.fast, self.slow)
        # Bests are 3 (fast) and 4.5 (slow): the level both reach is 4.5.
        self.assertIn("target: 4.5 (default: the best objective that every run reaches)", output)
        self.assertIn("first row with objective <= target (no interpolation)", output)
        # fast first gets <= 4.5 at round 20 (objective 4), slow at round 15 (4.5 itself).
        self.assertEqual(line_of(output, "fast"), ["1.000000", "20", "1.00"])
        self.assertEqual(line_of(output, "slow"), ["4.000000", "15", "0.25"])
        self.assertIn("baseline: fast", output)
        self.assertIn("fastest: fast (1.000000 s)", output)
        matrix = section(output, "speedup of each row")
        self.assertEqual(line_of(matrix, "[1]"), ["fast", "1.00", "4.00"])
        self.assertEqual(line_of(matrix, "[2]"), ["slow", "0.25", "1.00"])

    def test_baseline_is_the_first_trace_given(self):
        output = self.run_ok("compare", self.slow, self.fast)
        self.assertEqual(line_of(output, "slow"), ["4.000000", "15", "1.00"])
        self.assertEqual(line_of(output, "fast"), ["1.000000", "20", "4.00"])

    def test_explicit_target_takes_the_first_row_without_interpolation(self):
        # 5.5 lies between fast's 6 (0.5 s) and 4 (1.0 s): the answer is the row at 1.0 s, not 0.75 s.
        output = self.run_ok("compare", self.fast, self.slow, "--target", "5.5")
        self.assertIn("target: 5.5 (--target)", output)
        self.assertEqual(line_of(output, "fast"), ["1.000000", "20", "1.00"])
        self.assertEqual(line_of(output, "slow"), ["2.000000", "10", "0.50"])

    def test_a_row_equal_to_the_target_reaches_it(self):
        output = self.run_ok("compare", self.fast, self.slow, "--target", "6")
        self.assertEqual(line_of(output, "fast"), ["0.500000", "10", "1.00"])
        self.assertEqual(line_of(output, "slow"), ["2.000000", "10", "0.25"])

    def test_not_reached(self):
        output = self.run_ok("compare", self.fast, self.slow, "--target", "3.5")
        self.assertEqual(line_of(output, "fast"), ["2.000000", "30", "1.00"])
        self.assertEqual(line_of(output, "slow"), ["not", "reached", "-", "-"])
        matrix = section(output, "speedup of each row")
        self.assertEqual(line_of(matrix, "[1]"), ["fast", "1.00", "-"])
        self.assertEqual(line_of(matrix, "[2]"), ["slow", "-", "-"])

    def test_baseline_not_reached(self):
        output = self.run_ok("compare", self.slow, self.fast, "--target", "3.5")
        self.assertEqual(line_of(output, "slow"), ["not", "reached", "-", "-"])
        self.assertEqual(line_of(output, "fast"), ["2.000000", "30", "-"])
        self.assertIn("the baseline does not reach the target", output)
        self.assertIn("fastest: fast (2.000000 s)", output)

    def test_negative_target_value(self):
        output = self.run_ok("compare", self.trace("a.csv", LDA_A), "--target", "-12")
        self.assertIn("target: -12 (--target)", output)
        self.assertEqual(line_of(output, "a"), ["0.500000", "10", "1.00"])

    def test_single_row_trace_against_a_falling_one(self):
        single = self.trace("single.csv", SINGLE)
        output = self.run_ok("compare", self.fast, single)
        # single has no trend, fast falls: minimising. Bests 3 and 2.5: target 3.
        self.assertIn("direction: minimising (inferred: the objective falls)", output)
        self.assertIn("target: 3 (default", output)
        self.assertEqual(line_of(output, "fast"), ["2.000000", "30", "1.00"])
        self.assertEqual(line_of(output, "single"), ["0.250000", "7", "8.00"])

    def test_runs_that_reach_the_target_at_once_are_equally_fast(self):
        at_once = "round,seconds,objective\n0,0.0,5\n1,1.0,4\n"
        output = self.run_ok("compare", self.trace("a.csv", at_once), self.trace("b.csv", at_once),
                             self.fast, "--target", "5")
        self.assertEqual(line_of(output, "a"), ["0.000000", "0", "1.00"])
        self.assertEqual(line_of(output, "b"), ["0.000000", "0", "1.00"])
        matrix = section(output, "speedup of each row")
        self.assertEqual(line_of(matrix, "[1]"), ["a", "1.00", "1.00", "inf"])
        self.assertEqual(line_of(matrix, "[3]"), ["fast", "0.00", "0.00", "1.00"])

    def test_nan_objectives_never_reach_a_target(self):
        output = self.run_ok("compare", self.trace("nan.csv", NAN_OBJECTIVE), "--target", "100")
        # Row 0 (nan) does not count; row 1 (5) is the first to get <= 100.
        self.assertEqual(line_of(output, "nan"), ["0.200000", "1", "1.00"])


class DirectionTest(TraceTestCase):
    def setUp(self):
        super().setUp()
        self.lda_a = self.trace("mh.csv", LDA_A)
        self.lda_b = self.trace("sparse.csv", LDA_B)
        self.fast = self.trace("fast.csv", FAST)

    def test_rising_objective_is_maximised(self):
        output = self.run_ok("summary", self.lda_a, self.lda_b)
        self.assertIn("direction: maximising (inferred: the objective rises)", output)
        self.assertEqual(line_of(output, "mh"), ["20", "1.000000", "-11", "-11"])
        self.assertEqual(line_of(output, "sparse"), ["20", "1.500000", "-11.5", "-11.5"])

    def test_compare_maximising(self):
        output = self.run_ok("compare", self.lda_a, self.lda_b)
        # Bests -11 and -11.5: both reach -11.5. mh gets >= -11.5 at round 20 (1.0 s), sparse at 20 (1.5 s).
        self.assertIn("target: -11.5 (default", output)
        self.assertIn("first row with objective >= target", output)
        self.assertEqual(line_of(output, "mh"), ["1.000000", "20", "1.00"])
        self.assertEqual(line_of(output, "sparse"), ["1.500000", "20", "0.67"])
        self.assertEqual(line_of(section(output, "speedup of each row"), "[1]"), ["mh", "1.00", "1.50"])

    def test_flags_override_the_inference(self):
        output = self.run_ok("summary", self.fast, "--maximize")
        self.assertIn("direction: maximising (--maximize)", output)
        self.assertEqual(line_of(output, "fast"), ["30", "2.000000", "3", "10"])  # best is now the largest
        output = self.run_ok("summary", self.lda_a, "--minimize")
        self.assertIn("direction: minimising (--minimize)", output)
        self.assertEqual(line_of(output, "mh"), ["20", "1.000000", "-11", "-16.5"])
        output = self.run_ok("compare", self.fast, "--maximize", "--target", "6")
        self.assertIn("first row with objective >= target", output)
        self.assertEqual(line_of(output, "fast"), ["0.100000", "0", "1.00"])  # 10 >= 6 at once

    def test_runs_that_disagree_need_a_flag(self):
        result = run_tool("compare", self.fast, self.lda_a)
        self.assertEqual(result.returncode, 1)
        self.assertEqual(result.stdout, "")
        self.assertEqual(len(result.stderr.splitlines()), 1, result.stderr)
        self.assertIn("disagree", result.stderr)
        self.assertIn("rising: mh", result.stderr)
        self.assertIn("falling: fast", result.stderr)
        self.assertIn("--maximize or --minimize", result.stderr)
        # With a flag the same runs compare.
        output = self.run_ok("compare", self.fast, self.lda_a, "--maximize")
        self.assertIn("target: -11 (default", output)  # bests 10 and -11

    def test_flat_trace_does_not_vote(self):
        flat = self.trace("flat.csv", "round,seconds,objective\n0,0.1,-12\n1,0.2,-12\n")
        output = self.run_ok("summary", self.lda_a, flat)
        self.assertIn("maximising (inferred", output)


def png_size(path):
    with open(path, "rb") as file:
        head = file.read(24)
    # Signature, then the IHDR chunk: length, "IHDR", width, height (big-endian).
    assert head[:8] == b"\x89PNG\r\n\x1a\n", head[:8]
    assert head[12:16] == b"IHDR", head[12:16]
    return struct.unpack(">II", head[16:24])


def has_matplotlib():
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


@unittest.skipUnless(has_matplotlib(), "matplotlib is not installed (Debian: python3-matplotlib)")
class PlotTest(TraceTestCase):
    def test_plot_writes_a_1200_by_800_png(self):
        out = os.path.join(self.directory, "plot.png")
        output = self.run_ok("plot", self.trace("fast.csv", FAST), self.trace("slow.csv", SLOW),
                             self.trace("single.csv", SINGLE), self.trace("peer.csv", NO_SPLIT), "--out", out)
        self.assertEqual(output, f"wrote {out}\n")
        self.assertEqual(png_size(out), (1200, 800))
        self.assertGreater(os.path.getsize(out), 20000)
        # Nothing but the PNG and the traces: the temporary file was renamed, not left.
        self.assertEqual(sorted(os.listdir(self.directory)),
                         ["fast.csv", "peer.csv", "plot.png", "single.csv", "slow.csv"])

    def test_plot_with_optimum_and_maximising_runs(self):
        out = os.path.join(self.directory, "lda.png")
        result = run_tool("plot", self.trace("a.csv", LDA_A), self.trace("b.csv", LDA_B),
                          "--optimum", "-10", "--out", out, "--labels", "mh,sparse")
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertEqual(png_size(out), (1200, 800))
        self.assertGreater(os.path.getsize(out), 20000)

    def test_optimum_past_the_best_objective_warns(self):
        out = os.path.join(self.directory, "fast.png")
        result = run_tool("plot", self.trace("fast.csv", FAST), "--optimum", "5", "--out", out)
        self.assertEqual(result.returncode, 0, result.stderr)
        self.assertIn("warning: fast goes past --optimum 5 (best 3)", result.stderr)
        self.assertEqual(png_size(out), (1200, 800))

    def test_labels_are_shown_as_written(self):
        # A $ would start a formula (a bad one raised a traceback), and legends leave out labels that
        # start with _.
        module = load_module()
        traces = [module.read_trace(self.trace(name, FAST)) for name in ("a.csv", "b.csv")]
        module.assign_labels(traces, ["cost $\\foo$", "_hidden"])
        figure = module.build_figure(traces, module.MINIMIZE, "test", None)
        by_seconds, _, split = figure.axes[:3]
        self.assertEqual([text.get_text() for text in by_seconds.get_legend().get_texts()],
                         ["cost \\$\\foo\\$", " _hidden"])
        self.assertEqual([label.get_text() for label in split.get_yticklabels()],
                         ["cost \\$\\foo\\$", " _hidden"])
        out = os.path.join(self.directory, "labels.png")
        self.run_ok("plot", traces[0].path, traces[1].path, "--labels", "cost $\\foo$,_hidden", "--out", out)

    def test_figure_content(self):
        module = load_module()
        traces = []
        for name, text in (("fast.csv", FAST), ("slow.csv", SLOW), ("peer.csv", NO_SPLIT)):
            traces.append(module.read_trace(self.trace(name, text)))
        module.assign_labels(traces, None)
        figure = module.build_figure(traces, module.MINIMIZE, "test", None)
        by_seconds, by_rounds, split = figure.axes[:3]
        self.assertEqual(by_seconds.get_title(), "Objective against time")
        self.assertEqual(by_seconds.get_xlabel(), "solving time since loading (s)")
        self.assertEqual(by_seconds.get_ylabel(), "objective (minimised)")
        self.assertEqual(by_rounds.get_xlabel(), "round")
        self.assertEqual(by_seconds.get_yscale(), "linear")
        self.assertEqual([line.get_label() for line in by_seconds.get_lines()], ["fast", "slow", "peer"])
        fast_line = by_seconds.get_lines()[0]
        self.assertEqual(list(fast_line.get_xdata()), [0.1, 0.5, 1.0, 2.0])
        self.assertEqual(list(fast_line.get_ydata()), [10, 6, 4, 3])
        self.assertEqual(list(by_rounds.get_lines()[1].get_xdata()), [0, 5, 10, 15])
        # The time split: one stacked bar per run and part; fast's compute part starts after scheduler.
        self.assertEqual([text.get_text() for text in split.get_legend().get_texts()],
                         ["scheduler", "compute", "communication", "idle"])
        compute_bars = split.containers[1]
        for bar, start, width in zip(compute_bars, [0.4, 0.5, 0], [1.0, 2.5, 0]):
            self.assertAlmostEqual(bar.get_x(), start)
            self.assertAlmostEqual(bar.get_width(), width)
        self.assertEqual(len(compute_bars), 3)
        self.assertIn("Where the time went", split.get_title())

    def test_figure_with_optimum_is_log_scale_sub_optimality(self):
        module = load_module()
        # One row sits exactly at the optimum (distance 0): a log axis cannot show it, so it is left out.
        trace = module.read_trace(self.trace("fast.csv", FAST))
        module.assign_labels([trace], None)
        figure = module.build_figure([trace], module.MINIMIZE, "test", 3.0)
        by_seconds, by_rounds = figure.axes[:2]
        for axes in (by_seconds, by_rounds):
            self.assertEqual(axes.get_yscale(), "log")
            self.assertIn("|objective - 3|", axes.get_ylabel())
            self.assertIn("Sub-optimality", axes.get_title())
        self.assertEqual(list(by_seconds.get_lines()[0].get_ydata()), [7, 3, 1])
        self.assertEqual(list(by_rounds.get_lines()[0].get_xdata()), [0, 10, 20])
        negative = module.build_figure([trace], module.MAXIMIZE, "test", -10.0)
        self.assertIn("|objective - (-10)|", negative.axes[0].get_ylabel())
        self.assertEqual(list(negative.axes[0].get_lines()[0].get_ydata()), [20, 16, 14, 13])

    def test_nan_objective_is_left_out_of_the_sub_optimality(self):
        module = load_module()
        trace = module.read_trace(self.trace("nan.csv", NAN_OBJECTIVE))
        self.assertTrue(math.isnan(trace.rows[0].objective))
        figure = module.build_figure([trace], module.MINIMIZE, "test", 1.0)
        self.assertEqual(list(figure.axes[0].get_lines()[0].get_ydata()), [4, 3])


class ErrorsTest(TraceTestCase):
    def assert_fails(self, expected_message, *arguments, status=1):
        result = run_tool(*arguments)
        self.assertEqual(result.returncode, status, result.stderr)
        self.assertNotIn("Traceback", result.stderr)
        if status == 1:
            self.assertEqual(result.stderr.splitlines(), [f"schmp-trace: {expected_message}"])
        else:
            self.assertIn(expected_message, result.stderr)
        return result

    def test_plot_without_matplotlib(self):
        # A matplotlib that cannot be imported, found first on the path, stands for its absence.
        fake = os.path.join(self.directory, "fake", "matplotlib")
        os.makedirs(fake)
        with open(os.path.join(fake, "__init__.py"), "w") as init:
            init.write("raise ImportError('No module named matplotlib')\n")
        environment = dict(os.environ, PYTHONPATH=os.path.dirname(fake))
        result = subprocess.run([SCRIPT, "plot", self.trace("fast.csv", FAST), "--out",
                                 os.path.join(self.directory, "p.png")],
                                capture_output=True, text=True, timeout=60, env=environment)
        self.assertEqual(result.returncode, 1, result.stderr)
        self.assertEqual(result.stderr.splitlines(), [
            "schmp-trace: plot needs matplotlib (Debian: python3-matplotlib): No module named matplotlib"])

    def test_missing_file(self):
        path = os.path.join(self.directory, "missing.csv")
        self.assert_fails(f"{path}: cannot read: No such file or directory", "summary", path)

    def test_empty_file(self):
        path = self.trace("empty.csv", "")
        self.assert_fails(f"{path}:1: empty file: expected a header starting round,seconds,objective",
                          "summary", path)

    def test_header_without_required_columns(self):
        path = self.trace("header.csv", "round,time,loss\n0,0.1,1\n")
        self.assert_fails(f"{path}:1: header lacks column seconds, objective (a trace starts "
                          "round,seconds,objective)", "compare", path)

    def test_header_only(self):
        path = self.trace("header-only.csv", f"round,seconds,objective,{SPLIT_HEADER}\n")
        self.assert_fails(f"{path}:2: no rows after the header", "summary", path)

    def test_row_with_too_few_cells(self):
        path = self.trace("short.csv", FAST + "40,3.0,2.5\n")
        self.assert_fails(f"{path}:6: 3 cells, but the header has 8", "summary", path)

    def test_cell_that_is_not_a_number(self):
        path = self.trace("word.csv", FAST.replace("10,0.500000,6,", "10,0.500000,six,"))
        self.assert_fails(f"{path}:3: column objective: 'six' is not a number", "compare", path)

    def test_round_that_is_not_a_whole_number(self):
        path = self.trace("round.csv", FAST.replace("20,1.000000", "20.5,1.000000"))
        self.assert_fails(f"{path}:4: column round: '20.5' is not a whole number", "summary", path)

    def test_negative_seconds(self):
        path = self.trace("negative.csv", FAST.replace("30,2.000000", "30,-2.000000"))
        self.assert_fails(f"{path}:5: column seconds: '-2.000000' is not a time in seconds", "summary", path)

    def test_numbers_only_as_the_apps_write_them(self):
        for cell in ("1_000", "\u0661"):
            path = self.trace("digits.csv", FAST.replace("10,0.500000,6,", f"10,0.500000,{cell},"))
            self.assert_fails(f"{path}:3: column objective: {cell!r} is not a number", "summary", path)

    def test_header_with_an_unnamed_column(self):
        path = self.trace("comma.csv", "round,seconds,objective,\n0,0.1,1,\n")
        self.assert_fails(f"{path}:1: header has a column without a name (a stray comma?)", "summary", path)

    def test_header_with_part_of_the_time_split(self):
        path = self.trace("part.csv", "round,seconds,objective,scheduler_s,compute_s,communication_s\n"
                                      "0,0.1,1,0,0,0\n")
        self.assert_fails(f"{path}:1: header has scheduler_s, compute_s, communication_s but not idle_s: "
                          "a time split has all of scheduler_s, compute_s, communication_s, idle_s",
                          "summary", path)

    def test_binary_file(self):
        path = os.path.join(self.directory, "binary.csv")
        with open(path, "wb") as file:
            file.write(b"round,seconds,objective\n\xff\xfe\x00\x01\n")
        self.assert_fails(f"{path}:2: not UTF-8 text (is this a trace?)", "summary", path)

    def test_bad_trace_leaves_no_png(self):
        out = os.path.join(self.directory, "plot.png")
        good = self.trace("good.csv", FAST)
        bad = self.trace("bad.csv", SLOW + "20,x\n")
        self.assert_fails(f"{bad}:6: 2 cells, but the header has 8", "plot", good, bad, "--out", out)
        self.assertEqual(sorted(os.listdir(self.directory)), ["bad.csv", "good.csv"])

    def test_unwritable_output(self):
        out = os.path.join(self.directory, "no-such-directory", "plot.png")
        self.assert_fails(f"{out}: cannot write: No such file or directory",
                          "plot", self.trace("good.csv", FAST), "--out", out)

    def test_no_run_with_a_finite_objective(self):
        path = self.trace("all-nan.csv", "round,seconds,objective\n0,0.1,nan\n")
        self.assert_fails("no run has a finite objective: nothing to compare", "compare", path)
        result = self.assert_fails("no run has a finite objective: nothing to compare", "compare", path,
                                   "--target", "1")
        self.assertEqual(result.stdout, "")

    def test_bad_usage_exits_2_with_the_usage(self):
        good = self.trace("good.csv", FAST)
        for arguments, message in (
                ((), "the following arguments are required: COMMAND"),
                (("frobnicate", good), "invalid choice"),
                (("summary",), "the following arguments are required: TRACE"),
                (("plot", good), "the following arguments are required: --out"),
                (("compare", good, "--target", "abc"), "'abc' is not a number"),
                (("compare", good, "--target", "nan"), "'nan' is not a finite number"),
                (("summary", good, "--labels", "a,b"), "--labels names 2 runs, but 1 traces were given"),
                (("summary", good, "--maximize", "--minimize"), "not allowed with argument"),
        ):
            with self.subTest(arguments=arguments):
                result = self.assert_fails(message, *arguments, status=2)
                self.assertIn("usage: schmp-trace", result.stderr)

    def test_help(self):
        result = run_tool("--help")
        self.assertEqual(result.returncode, 0)
        for command in ("summary", "compare", "plot"):
            self.assertIn(command, result.stdout)
        result = run_tool("plot", "--help")
        self.assertEqual(result.returncode, 0)
        self.assertIn("--optimum", result.stdout)

    def test_script_runs_under_the_system_python(self):
        with open(SCRIPT) as file:
            self.assertEqual(file.readline(), "#!/usr/bin/python3\n")
        self.assertTrue(os.access(SCRIPT, os.X_OK))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(f"usage: {sys.argv[0]} PATH/TO/schmp-trace [unittest arguments]")
    SCRIPT = os.path.abspath(sys.argv.pop(1))
    unittest.main()
