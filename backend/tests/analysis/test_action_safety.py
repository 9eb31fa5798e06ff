"""Action safety: each rule on an unsafe and a safe action built from real values, the safe forms the action
builders now produce, and every action of every report on the whole corpus (real logs and scenarios) safe."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from iodiag.analysis import analyze
from iodiag.analysis.models import Action, Layer, Report
from iodiag.analysis.outcomes.action_safety import (
    RULES,
    ActionFacts,
    check_action,
    check_actions,
    facts_for,
    is_measurement,
    layout_action,
    safe_actions,
)
from iodiag.analysis.outcomes.actions import lustre_layouts
from iodiag.analysis.views.context import Context
from iodiag.core.thresholds import Thresholds
from iodiag.evals.triggers import build_entry, load_corpus
from iodiag.evals.triggers import facts_for as scenario_facts
from iodiag.ingest import load_profile
from iodiag.ingest.errors import LogReadError
from tests.conftest import REPO, all_logs, shared_log, wheel_log, wheel_logs
from tests.profiles import MiB, make_profile

OUT = "/lus/theta-fs0/projects/climate/run42"
THETA = ActionFacts(
    mounts=("/", "/lus/theta-fs0", "/home"),
    job_dirs=frozenset({OUT}),
    job_files=frozenset({f"{OUT}/restart.{i:04d}.nc" for i in range(4)}),
    files_per_dir={OUT: 4},
    cost_layer=Layer.LUSTRE,
    interfaces=frozenset({"POSIX", "MPI-IO", "PnetCDF"}),
    lustre=True,
)


def act(
    command: str, where: str = "shell, on the output directory before the job creates the file", **kw: Any
) -> Action:
    rec = kw.pop("recommendation", "lustre-stripe-count")
    return Action(recommendation=rec, command=command, where=where, effect=kw.pop("effect", ""), **kw)


def rules_hit(action: Action, facts: ActionFacts, first: bool = False) -> set[str]:
    return {p.split(":", 1)[0] for p in check_action(action, facts, first=first)}


def test_every_rule_is_registered() -> None:
    assert list(RULES) == [
        "lfs-target",
        "ost-pinning",
        "hint-in-effect",
        "default-as-fix",
        "wrong-layer",
        "measurement",
        "where",
        "shell-quoting",
    ]


# --- (a) lfs targets ---------------------------------------------------------------------------------------------


def test_lfs_never_targets_a_mount_point_root_or_a_path_above_one() -> None:
    # The expert's headline: Theta's file system mount point as the target of lfs setstripe.
    assert rules_hit(act("lfs setstripe -c 24 -S 1M /lus/theta-fs0"), THETA) == {"lfs-target"}
    assert rules_hit(act("lfs setstripe -c 24 -S 1M /lus/theta-fs0/"), THETA) == {"lfs-target"}
    assert rules_hit(act("lfs setstripe -c 24 -S 1M /"), THETA) == {"lfs-target"}
    assert rules_hit(act("lfs setstripe -c 24 -S 1M /lus"), THETA) == {"lfs-target"}  # above /lus/theta-fs0
    assert rules_hit(act("lfs setstripe -c 24 -S 1M /lus/theta-fs0/projects/other"), THETA) == {"lfs-target"}
    # The job's own output directory, or one of its files (created empty with the layout): safe.
    assert not check_action(act(f"lfs setstripe -c 24 -S 1M {OUT}"), THETA)
    assert not check_action(act(f"lfs setstripe -c 24 -S 1M {OUT}/restart.0000.nc"), THETA)


def test_a_file_at_a_mount_points_top_gets_its_own_layout_not_the_mount_points(tmp_path: Path) -> None:
    """A shared one-OST file right under the mount point: lfs setstripe goes on the file, never on the mount."""
    px = {"id": 1, "rank": -1, "POSIX_WRITES": 512, "POSIX_BYTES_WRITTEN": 512 * 16 * MiB}
    px |= {"POSIX_ACCESS1_ACCESS": 16 * MiB, "POSIX_ACCESS1_COUNT": 512}
    lu = {"id": 1, "rank": -1, "stripe_size": MiB, "stripe_count": 1, "osts": (7,)}
    mounts = (("/", "rootfs"), ("/lus/theta-fs0", "lustre"))
    for path in ("/lus/theta-fs0/ckpt.dat", "/lus/theta-fs0/my run; rm -rf ~/ckpt $(id).dat"):
        profile = make_profile({"POSIX": [px], "LUSTRE": [lu]}, nprocs=64, names={1: path}, mounts=mounts)
        ctx = Context(profile)
        (lay,) = lustre_layouts(ctx)
        assert lay.command is not None and not lay.fits
        target = shlex.split(lay.command)[-1]
        expected = path if path.rsplit("/", 1)[0] == "/lus/theta-fs0" else path.rsplit("/", 1)[0]
        assert target == expected and lay.command.endswith(shlex.quote(expected))
        assert not check_action(layout_action(lay.command), facts_for(ctx, Layer.LUSTRE), first=True)
        report = analyze(profile)
        for f in report.findings:
            assert not check_actions(f.actions, facts_for(ctx, f.layer)), f.code


# --- (b) OST pinning ---------------------------------------------------------------------------------------------


def test_no_directory_is_pinned_to_one_ost() -> None:
    # sample-badost: 2,048 one-OST files per run in one directory, OST 14 slow; -o 0 sends all of them to OST 0.
    d = "/scratch1/scratchdirs/glock/test-scratch1"
    facts = ActionFacts(job_dirs=frozenset({d}), files_per_dir={d: 2048}, lustre=True)
    assert rules_hit(act(f"lfs setstripe -c 1 -o 0 {d}"), facts) == {"ost-pinning"}
    assert rules_hit(act(f"lfs setstripe -c 4 -o 0-3 {d}"), facts) == {"ost-pinning"}  # 2,048 files, same 4 OSTs
    assert rules_hit(act(f"lfs setstripe -c 1 -i 3 {d}"), facts) == {"ost-pinning"}
    assert rules_hit(act(f"lfs setstripe -c 2 -o 1,3,5 {d}"), facts) == {"ost-pinning"}  # lfs refuses: 2 != 3
    # Letting the file system place them is safe.
    assert not check_action(act(f"lfs setstripe -c 1 {d}"), facts)
    # One checkpoint per run, striped over 8 OSTs named to skip the slow one: a list of many targets.
    ckpt = "/lus/scratch/ckpt"
    one = ActionFacts(job_dirs=frozenset({ckpt}), files_per_dir={ckpt: 1}, lustre=True)
    assert not check_action(act(f"lfs setstripe -c 8 -o 0-4,6-8 {ckpt}"), one)
    assert rules_hit(act(f"lfs setstripe -c 1 -o 0 {ckpt}"), one) == {"ost-pinning"}


def test_the_slow_ost_action_no_longer_pins_badost() -> None:
    r = analyze(load_profile(str(wheel_log("sample-badost.darshan"))))
    l04 = r.finding("L04")
    assert l04 is not None and not [a for a in l04.actions if " -o " in a.command]
    assert " -o 0" not in r.verdict.headline and "storage team" in r.verdict.headline


# --- (c) hints already in effect ------------------------------------------------------------------------------


def test_a_hint_already_in_effect_is_not_advised() -> None:
    facts = ActionFacts(hints={"romio_cb_write": "ENABLE", "cb_nodes": "4"}, interfaces=frozenset({"MPI-IO"}))
    where = "the job script before srun/mpirun (Cray MPICH)"
    assert rules_hit(act('export MPICH_MPIIO_HINTS="*:romio_cb_write=enable"', where), facts) == {"hint-in-effect"}
    assert rules_hit(act('export MPICH_MPIIO_HINTS="*:ROMIO_CB_WRITE=Enable"', where), facts) == {"hint-in-effect"}
    assert rules_hit(act('export MPICH_MPIIO_HINTS="*:cb_nodes=4"', where), facts) == {"hint-in-effect"}
    assert not check_action(act('export MPICH_MPIIO_HINTS="*:cb_nodes=8:romio_cb_read=enable"', where), facts)


def test_collective_buffering_the_counters_show_is_not_advised_again() -> None:
    """E3SM: 102,912 collective writes reached the file system from 56 of 512 ranks: collective buffering is on,
    so no action sets romio_cb_write=enable."""
    profile = load_profile(str(shared_log("darshan-logs/e3sm_io_heatmaps_and_dxt/e3sm_io_heatmap_only.darshan")))
    assert facts_for(Context(profile), None).hints.get("romio_cb_write") == "enable"
    r = analyze(profile)
    assert not [a for f in r.findings for a in f.actions if "romio_cb_write" in a.command]


# --- (d) defaults presented as fixes -------------------------------------------------------------------------


def test_a_library_default_is_not_a_fix() -> None:
    pnetcdf = ActionFacts(interfaces=frozenset({"MPI-IO", "PnetCDF"}))
    code = "the PnetCDF code, after ncmpi_create"
    assert rules_hit(act("ncmpi_set_fill(ncid, NC_NOFILL, NULL);", code), pnetcdf) == {"default-as-fix"}
    hints = "the job script before srun/mpirun"
    assert rules_hit(act('export MPICH_MPIIO_HINTS="*:cb_buffer_size=16777216"', hints), pnetcdf) == {"default-as-fix"}
    assert not check_action(act('export MPICH_MPIIO_HINTS="*:cb_buffer_size=67108864"', hints), pnetcdf)
    assert rules_hit(act('export MPICH_MPIIO_HINTS="*:romio_cb_write=automatic"', hints), pnetcdf) == {"default-as-fix"}
    # The job turned collective buffering off: going back to ROMIO's automatic choice is a change.
    off = pnetcdf.model_copy(update={"hints": {"romio_cb_write": "disable"}})
    assert not check_action(act('export MPICH_MPIIO_HINTS="*:romio_cb_write=automatic"', hints), off)
    h5 = ActionFacts(interfaces=frozenset({"MPI-IO", "HDF5"}))
    dcpl = "the HDF5 code, on each dataset creation property list before H5Dcreate"
    assert not check_action(act("H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER);", dcpl), h5)
    assert rules_hit(act("H5Pset_fill_time(dcpl, H5D_FILL_TIME_IFSET);", dcpl), h5) == {"default-as-fix"}


# --- (e) the layer the cost is in ------------------------------------------------------------------------------


def test_advice_for_a_layer_the_cost_is_not_in() -> None:
    # 2 KiB write() calls: the cost is in POSIX, a stdio buffer does not touch them.
    posix = ActionFacts(cost_layer=Layer.POSIX, interfaces=frozenset({"POSIX", "STDIO"}))
    buf = act("setvbuf(fp, NULL, _IOFBF, 1048576); /* 1M */", "the C code, right after each fopen")
    assert rules_hit(buf, posix) == {"wrong-layer"}
    assert not check_action(buf, posix.model_copy(update={"cost_layer": Layer.STDIO}))
    # MACSio: the datasets are written collectively, the 7,692 independent ~192-byte writes are HDF5 metadata.
    meta = ActionFacts(cost_layer=Layer.MPIIO, interfaces=frozenset({"MPI-IO", "HDF5"}), hdf5_metadata_writes=True)
    dxpl = "the HDF5 code: a dataset transfer property list passed to every H5Dwrite/H5Dread"
    assert rules_hit(act("H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);", dxpl), meta) == {"wrong-layer"}
    fapl = "the HDF5 code, on the file access property list before H5Fcreate/H5Fopen"
    coll_meta = act("H5Pset_all_coll_metadata_ops(fapl, 1); H5Pset_coll_metadata_write(fapl, 1);", fapl)
    assert not check_action(coll_meta, meta)
    data = meta.model_copy(update={"hdf5_metadata_writes": False})
    assert not check_action(act("H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE);", dxpl), data)
    # A library or a file system the job does not use.
    gpfs = ActionFacts(cost_layer=Layer.POSIX, interfaces=frozenset({"POSIX", "MPI-IO"}), lustre=False)
    assert rules_hit(act("ncmpi_set_fill(ncid, NC_FILL, NULL);", "the PnetCDF code, after ncmpi_create"), gpfs) == {
        "wrong-layer"
    }
    assert "wrong-layer" in rules_hit(act("lfs setstripe -c 8 -S 4M /gpfs/run"), gpfs)


def test_real_logs_get_advice_in_the_layer_of_their_cost() -> None:
    macsio = analyze(load_profile(str(next(p for p in wheel_logs() if p.name.startswith("shane_macsio_id29959")))))
    commands = [a.command for f in macsio.findings for a in f.actions]
    assert commands and not [c for c in commands if "H5Pset_dxpl_mpio" in c]
    x04 = macsio.finding("X04")
    assert x04 is not None and x04.actions[0].command.startswith("H5Pset_all_coll_metadata_ops(fapl, 1);")
    assert "independent MPI-IO writes are HDF5 metadata" in x04.actions[0].effect
    nonmpi = analyze(load_profile(str(shared_log("darshan-logs/nonmpi_dxt_anonymized/nonmpi_dxt_anonymized.darshan"))))
    assert not [a for f in nonmpi.findings if f.layer is Layer.POSIX for a in f.actions if "setvbuf" in a.command]


# --- (f) measurements ------------------------------------------------------------------------------------------


def test_a_measurement_is_labelled_and_never_first() -> None:
    facts = ActionFacts(interfaces=frozenset({"MPI-IO"}))
    stats = act("export MPICH_MPIIO_STATS=1 MPICH_MPIIO_TIMERS=1", "the job script before srun (Cray MPICH)")
    assert is_measurement(stats)
    assert rules_hit(stats, facts) == {"measurement"}  # not labelled
    labelled = stats.model_copy(update={"where": "measure first: the job script before srun (Cray MPICH)"})
    assert not check_action(labelled, facts)
    assert rules_hit(labelled, facts, first=True) == {"measurement"}  # the verdict would show it as the fix
    dxt = act("export DXT_ENABLE_IO_TRACE=1", "measure first: the job script before the step to trace")
    assert is_measurement(dxt) and rules_hit(dxt, facts, first=True) == {"measurement"}
    # A path that merely contains "darshan-" is not a Darshan tool.
    assert not is_measurement(act("lfs setstripe -c 2 -S 16M /home/u/builds/darshan-logs"))
    # Kept behind the change it helps to choose, dropped when nothing else is left to show first.
    hint = act('export MPICH_MPIIO_HINTS="*:romio_cb_read=enable"', "the job script before srun/mpirun")
    assert safe_actions([labelled, hint], facts) == [hint, labelled]
    assert safe_actions([labelled], facts) == []


# --- (g) where -----------------------------------------------------------------------------------------------


def test_every_action_says_where_and_when() -> None:
    facts = ActionFacts()
    call = "MPI_File_write_at_all(fh, offset, buf, count, type, &status);"
    assert rules_hit(act(call, ""), facts) == {"where"}
    assert rules_hit(act(call, "the per-rank output files"), facts) == {"where"}  # no place, no time
    assert rules_hit(act(call, "the code that opens the per-rank output files"), facts) == {"where"}  # no time
    assert not check_action(act(call, "the MPI-IO code: each MPI_File_write_at becomes its _all form"), facts)


# --- (h) shell quoting ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "/lus/scratch/my run",
        "/lus/scratch/it's",
        "/lus/scratch/$HOME",
        "/lus/scratch/out; rm -rf ~",
        "/lus/scratch/`reboot`",
        '/lus/scratch/"q"',
    ],
)
def test_log_paths_reach_the_shell_quoted(name: str) -> None:
    facts = ActionFacts(job_dirs=frozenset({name}), files_per_dir={name: 1}, lustre=True)
    assert "shell-quoting" in rules_hit(act(f"lfs setstripe -c 4 -S 4M {name}"), facts)
    assert not check_action(act(f"lfs setstripe -c 4 -S 4M {shlex.quote(name)}"), facts)
    tar = f"tar -cf inputs.tar -C {shlex.quote(name)} . && srun --ntasks-per-node=1 -N 4 tar -xf inputs.tar -C /tmp"
    assert not check_action(act(tar, "the job script, before the step that reads the files"), facts)


# --- the whole corpus ------------------------------------------------------------------------------------------


def _problems(label: str, profile_report: tuple[Context, Report]) -> tuple[int, list[str]]:
    ctx, report = profile_report
    problems: list[str] = []
    checked = 0
    for f in report.findings:
        checked += len(f.actions)
        problems += [f"{label} {f.code} {p}" for p in check_actions(f.actions, facts_for(ctx, f.layer))]
    lustre = facts_for(ctx, Layer.LUSTRE)
    for lay in report.lustre_layouts:
        if lay.command:
            checked += 1
            problems += [f"{label} layout {p}" for p in check_action(layout_action(lay.command), lustre, first=True)]
    for c in report.verdict.causes:
        if c.command and is_measurement(act(c.command)):
            problems.append(f"{label} verdict shows the measurement {c.command!r} as the fix")
    return checked, problems


def _analyzed(path: Path, include: tuple[str, ...], facts: Any = None) -> tuple[Context, Report]:
    profile = load_profile(str(path), include=include)
    return Context(profile, facts=facts, thresholds=Thresholds()), analyze(profile, facts=facts)


def test_every_action_on_every_real_log_is_safe() -> None:
    checked, problems = 0, []
    logs = all_logs()
    for log in logs:
        n, p = _problems(log.name, _analyzed(log, ("HEATMAP",)))
        checked, problems = checked + n, problems + p
    assert len(logs) >= 60 and checked >= 50, (len(logs), checked)
    assert not problems, "\n".join(problems)


def test_every_action_on_every_scenario_is_safe(tmp_path_factory: pytest.TempPathFactory) -> None:
    cache = tmp_path_factory.mktemp("scenario-cache")
    checked, problems = 0, []
    entries = load_corpus(REPO / "evals" / "scenarios")
    for e in entries:
        include = ("HEATMAP", "DXT") if e.scenario.dxt else ("HEATMAP",)
        try:
            analyzed = _analyzed(build_entry(e, cache), include, scenario_facts(e.scenario))
        except LogReadError:
            assert e.faults.damage, e.scenario.name  # only a deliberately damaged log may be unreadable
            continue
        n, p = _problems(e.scenario.name, analyzed)
        checked, problems = checked + n, problems + p
    assert len(entries) >= 140 and checked >= 100, (len(entries), checked)
    assert not problems, "\n".join(problems)
