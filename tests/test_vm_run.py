# SPDX-License-Identifier: GPL-2.0
"""The VM runner's console verdicts: which kernel reports fail a run, and
which kmemleak reports are ours (tools/vm-run)."""

import os
import subprocess

from lib import tools

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
vm_run = tools.load("vm-run")

# Shapes of 6.1's reports, trimmed.
FAULTS = [
    "[   12.1] UBSAN: shift-out-of-bounds in net/sched/sch_epdn.c:10:5",
    "[   12.1] BUG: KASAN: slab-out-of-bounds in rn_recv_gaps+0x1/0x2",
    "[   12.1] WARNING: possible circular locking dependency detected",
    "[   12.1] INFO: trying to register non-static key.",
    "[   12.1] BUG: sleeping function called from invalid context at x.c:1",
    "[   12.1] ODEBUG: free active (active state 0) object type: timer_list",
]
CLEAN = [
    "[    0.0] Linux version 6.1.192-satnet-debug",
    "[    1.2] kmemleak: Kernel memory leak detector initialized (mempool)",
    "[    3.4] sch_epdn: loading out-of-tree module taints kernel.",
]


def test_every_debug_report_fails_the_run():
    for line in FAULTS:
        assert vm_run.BAD.search(line), line
    for line in CLEAN:
        assert not vm_run.BAD.search(line), line


def report(frames):
    return ["unreferenced object 0xffff888004a1c000 (size 64):",
            '  comm "python3", pid 212, jiffies 4294937296 (age 9.1s)',
            "  backtrace:"] + \
        ["    [<ffffffff8135a1b2>] %s" % f for f in frames]


def test_kmemleak_reports_of_our_modules_fail():
    ours = report(["__kmem_cache_alloc_node+0x1a/0x30",
                   "rn_flow_get+0x9c/0x1f0 [rn_host]",
                   "nf_hook_slow+0x5e/0x100"])
    # Unloaded before the scan, with KASLR and without (the debug kernel).
    unloaded = report(["kmalloc_trace+0x21/0x90", "0xffffffffc0a41234"])
    unloaded2 = report(["kvmalloc_node+0x52/0x150", "0xffffffffa000632c",
                        "qdisc_create+0x3ac/0xd70"])
    kernels = report(["kmalloc_trace+0x21/0x90", "acpi_ds_init+0x4/0x9"])
    faults = vm_run.own_leaks(kernels + ours + kernels + unloaded +
                              unloaded2)
    assert len(faults) == 3
    assert "[rn_host]" in faults[0] and "0xffffffffc0a41234" in faults[1]
    assert "0xffffffffa000632c" in faults[2]
    assert vm_run.own_leaks(kernels + kernels) == []
    assert vm_run.own_leaks([]) == []


def parse(*argv):
    """vm-run's arguments as main() leaves them, or SystemExit."""
    import argparse
    p = argparse.ArgumentParser()
    p.add_argument("--smp", type=int)
    p.add_argument("--clock", default="real")
    p.add_argument("--icount-shift", type=int, default=0)
    p.add_argument("--native", action="store_true")
    p.add_argument("--vm", action="store_true")
    a = p.parse_args(list(argv))
    vm_run.check_clock(p, a)
    return a


def test_virtual_clock_is_icount_on_one_vcpu():
    a = parse("--clock", "virtual", "--icount-shift", "3")
    assert a.smp == 1 and a.vm
    assert vm_run.accel_args(a, kvm=True) == [
        "-accel", "tcg", "-cpu", "max", "-icount", "shift=3,sleep=off"]
    assert vm_run.clock_env(a) == {"SATNET_CLOCK": "virtual",
                                   "SATNET_ACCEL": "tcg",
                                   "SATNET_ICOUNT_SHIFT": "3"}
    real = parse()
    assert real.smp == 2 and "-icount" not in vm_run.accel_args(real, False)
    assert vm_run.clock_env(real) == {"SATNET_CLOCK": "real",
                                      "SATNET_ACCEL": "tcg"}
    assert vm_run.clock_env(real, kvm=True)["SATNET_ACCEL"] == "kvm"


def test_virtual_clock_refuses_smp_and_native(capsys):
    import pytest
    for argv in (("--smp", "2"), ("--native",), ("--icount-shift", "11")):
        with pytest.raises(SystemExit) as e:
            parse("--clock", "virtual", *argv)
        assert e.value.code == 2
    assert "SMP guests hang" in capsys.readouterr().err


def test_kernel_choice(tmp_path):
    """stock is Debian 12's 6.1; X.Y the newest generic kernel of that
    series; a release itself; never a -cloud or -rt flavour."""
    for rel in ("6.1.0-9-amd64", "6.1.0-56-amd64", "6.1.0-56-cloud-amd64",
                "6.12.95+deb12-amd64", "6.12.117+deb12-amd64",
                "6.12.117+deb12-rt-amd64", "6.12.117+deb12-cloud-amd64"):
        (tmp_path / ("vmlinuz-" + rel)).write_bytes(b"")
    boot = str(tmp_path)
    assert vm_run.guest_kernel(boot=boot) == "6.1.0-56-amd64"
    assert vm_run.guest_kernel("6.12", boot) == "6.12.117+deb12-amd64"
    assert vm_run.guest_kernel("6.12.95+deb12-amd64", boot) == \
        "6.12.95+deb12-amd64"
    assert vm_run.series_of("6.12.117+deb12-amd64") == "6.12"
    assert vm_run.series_of("6.1.0-56-amd64") == "6.1"
    import pytest
    with pytest.raises(SystemExit):
        vm_run.guest_kernel("6.6", boot)


def test_compressed_modules_and_images(tmp_path):
    """Debian's 6.12 ships .ko.xz modules and a zstd-compressed image."""
    import lzma
    import shutil
    import subprocess
    elf = b"\x7fELF" + bytes(range(256)) * 64
    ko = tmp_path / "m.ko.xz"
    ko.write_bytes(lzma.compress(elf))
    assert vm_run.module_paths(str(tmp_path)) == {}       # not under kernel/
    kdir = tmp_path / "kernel" / "net"
    kdir.mkdir(parents=True)
    shutil.move(str(ko), str(kdir / "9pnet-virtio.ko.xz"))
    paths = vm_run.module_paths(str(tmp_path))
    assert list(paths) == ["9pnet_virtio"]
    vm_run.copy_module(paths["9pnet_virtio"], str(tmp_path / "out.ko"))
    assert (tmp_path / "out.ko").read_bytes() == elf
    if shutil.which("zstd"):
        z = subprocess.run(["zstd", "-q", "-c"], input=elf,
                           capture_output=True, check=True).stdout
        img = tmp_path / "vmlinuz"
        img.write_bytes(b"MZ" + bytes(500) + z + b"\x00trailer" * 9)
        vm_run.extract_vmlinux(str(img), str(tmp_path / "vmlinux"))
        assert (tmp_path / "vmlinux").read_bytes() == elf


def test_the_kvm_verdict_is_replaced_whole(tmp_path, monkeypatch):
    """Guests booted at once (satnet run --guests) read the probe's
    verdict while another may write it: it is renamed into place, never
    seen empty or half written."""
    probe = tmp_path / "kvm-probe"
    probe.write_text("yes\n")
    seen = []
    rename = os.rename

    def watch(src, dst):
        seen.append(probe.read_text())       # what a reader gets meanwhile
        rename(src, dst)

    monkeypatch.setattr(vm_run.os, "rename", watch)
    vm_run.remember_kvm(str(tmp_path), False)
    assert seen == ["yes\n"] and probe.read_text() == "no\n"
    assert os.listdir(tmp_path) == ["kvm-probe"]


def fake_guest(tmp_path, console):
    """A stand-in for qemu that prints @console (a shell snippet)."""
    sh = tmp_path / "qemu.sh"
    sh.write_text("echo '%s'\n%s\n" % (vm_run.RUN_MARK, console))
    return ["sh", str(sh)]


def supervise(tmp_path, clock, console, timeout=1):
    import argparse
    args = argparse.Namespace(clock=clock, timeout=timeout,
                              log=str(tmp_path / "console.log"))
    return vm_run.supervise(fake_guest(tmp_path, console),
                            str(tmp_path / "out"), args)


def test_the_virtual_clocks_timeout_is_the_guests(tmp_path, monkeypatch,
                                                   capsys):
    """On the virtual clock the host's time does not end a run that the
    guest's heartbeat shows alive, however long it takes; a guest gone
    silent (its clock stopped) is stopped, with a message saying so; the
    guest's own limit is the script's."""
    # Beats 8 times as often as the stall limit: a loaded host that
    # delays one beat by a second must not make the guest look silent.
    monkeypatch.setattr(vm_run, "STALL_S", 2)
    alive = "for i in 1 2 3 4 5 6 7 8; do sleep 0.25; echo '%s'; done\n" \
        "echo '%s0'" % (vm_run.BEAT, vm_run.EXIT_MARK)
    assert supervise(tmp_path, "virtual", alive) == 0
    assert vm_run.BEAT not in (tmp_path / "console.log").read_text()
    assert supervise(tmp_path, "real", alive) == 124     # 2 s > 1 s
    assert supervise(tmp_path, "virtual", "sleep 4") == 124
    assert "clock stopped" in capsys.readouterr().err
    script = vm_run.write_script(str(tmp_path), ["python3", "-c", "1"], "/",
                                 guest_timeout=600)
    text = open(script).read()
    assert "\ntimeout -k 30 600 python3 -c 1\nst=$?\n" in text
    assert text.endswith("\nexit $st\n")
    assert vm_run.STUCK_DUMP in text
    # the dump (less its sysrq, the host's) lists the command, still there
    monkeypatch.setattr(vm_run, "STUCK_DUMP",
                        vm_run.STUCK_DUMP.split(";")[0])
    monkeypatch.setattr(vm_run, "DUMP_S", 2)
    stuck = vm_run.write_script(str(tmp_path), ["sleep", "30"], "/",
                                guest_timeout=3)
    r = subprocess.run(["sh", stuck], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 124 and "outlived its limit, 3 s" in r.stderr
    assert "nears its limit" in r.stderr and "sleep 30" in r.stderr
    quick = vm_run.write_script(str(tmp_path), ["true"], "/",
                                guest_timeout=3)
    r = subprocess.run(["sh", quick], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0 and "limit" not in r.stderr
    plain = vm_run.write_script(str(tmp_path), ["true"], "/")
    assert "timeout" not in open(plain).read()


def test_a_kernel_that_faults_in_its_boot_is_booted_once_more(
        tmp_path, monkeypatch, capsys):
    """A guest that dies of a kernel fault before the command starts (no
    module of ours loaded yet) is booted again, its console kept aside; a
    second such boot fails the run, and a fault once the command runs is
    never retried."""
    died = "echo 'Oops: int3: 0000 [#1] PREEMPT SMP'"
    sh = tmp_path / "qemu.sh"
    sh.write_text(died + "\n")
    import argparse
    log = tmp_path / "console.log"
    args = argparse.Namespace(clock="real", timeout=5, log=str(log))
    assert vm_run.supervise(["sh", str(sh)], str(tmp_path / "out"),
                            args) == vm_run.BOOT_FAULT
    assert supervise(tmp_path, "real", died) == 125      # after RUN_MARK

    boots = []

    def boot(args, cache, guest, kvm):
        boots.append(kvm)
        with open(args.log, "w") as f:
            f.write("boot %d\n" % len(boots))
        return statuses.pop(0)

    monkeypatch.setattr(vm_run, "boot", boot)
    monkeypatch.setattr(vm_run, "stock_guest",
                        lambda cache, want=None: vm_run.Guest("k", "i", "r"))
    monkeypatch.setattr(vm_run, "module_set", lambda args, guest: "")
    monkeypatch.setenv("SATNET_ACCEL", "tcg")
    args = argparse.Namespace(kernel="stock", clock="real", log=str(log))
    statuses = [vm_run.BOOT_FAULT, 0]
    assert vm_run.run_vm(args) == 0 and len(boots) == 2
    assert log.read_text() == "boot 2\n"
    assert (tmp_path / "console.log.boot-fault").read_text() == "boot 1\n"
    assert "faulted in its boot" in capsys.readouterr().err
    statuses = [vm_run.BOOT_FAULT, vm_run.BOOT_FAULT]
    assert vm_run.run_vm(args) == 125 and len(boots) == 4
    statuses = [3]
    assert vm_run.run_vm(args) == 3 and len(boots) == 5
