"""Shared by bench/lasso_peers.py and bench/logreg_peers.py: timing a peer's fits under a limit, and
running schmp with a trace."""

import csv
import multiprocessing
import subprocess
import time
import warnings

import numpy as np

TOLS = [10.0**-k for k in range(2, 11)]


def timed_fit(model, X_fit, y):
    """Seconds of model.fit(X_fit, y), and the coefficients."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        model.fit(X_fit, y)
        return time.perf_counter() - t0, np.ravel(model.coef_)


def warm_fit(model, X_fit, y):
    """timed_fit, again when it took under a second, keeping the faster: a forked child's first fit
    touches its pages afresh, which would count against a fit of a few milliseconds."""
    seconds, coef = timed_fit(model, X_fit, y)
    if seconds < 1:
        seconds = min(seconds, timed_fit(model, X_fit, y)[0])
    return seconds, coef


def run_within(limit, run):
    """run() in a forked child, stopped after `limit` seconds (then None): a solve that stalls at a
    tight tolerance cannot hold the benchmark up."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=lambda: sender.send(run()))
    child.start()
    result = receiver.recv() if receiver.poll(limit) else None
    child.terminate()
    child.join()
    return result


def fit_within(model, X_fit, y, limit):
    """warm_fit under run_within."""
    return run_within(limit, lambda: warm_fit(model, X_fit, y))


def peer_fits(make, X_fit, y, objective, limit):
    """[tol, seconds, objective(coef)] per tolerance of TOLS, make(tol) giving the model, until a fit
    takes longer than `limit` seconds."""
    timed_fit(make(TOLS[0]), X_fit, y)  # warm-up (numba compiles), inherited by the forks
    fits = []
    for tol in TOLS:
        result = fit_within(make(tol), X_fit, y, limit)
        if result is None:
            break
        seconds, coef = result
        fits.append([tol, seconds, objective(coef)])
        if seconds > limit:
            break
    return fits


def schmp_command(schmp, mpirun, ranks):
    """The command line of schmp on `ranks` ranks: alone for one, else under the launcher `mpirun`."""
    return [schmp] if ranks == 1 else mpirun.split() + ["-np", str(ranks), schmp]


def schmp_run(command, flags, trace, limit):
    """Whole-process seconds and the trace's (seconds, objective, relative_gap) rows of command + flags."""
    t0 = time.perf_counter()
    subprocess.run(command + flags + ["--trace", trace, "--progress_seconds", "0", "--max_seconds", str(limit)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t0
    with open(trace) as f:
        rows = [(float(r["seconds"]), float(r["objective"]), float(r["relative_gap"])) for r in csv.DictReader(f)]
    return wall, rows
