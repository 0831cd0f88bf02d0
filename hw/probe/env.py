"""The provenance recorded at the top of every sample file, and torch imported lazily.

Nothing here imports torch at module load: import_torch() does, when a measurement starts.
"""

import datetime
import shlex
import socket
import subprocess
import sys

PROBE = "llmp hw/probe 1"


def import_torch():
    """torch, or SystemExit with a message naming what is missing."""
    try:
        import torch  # noqa: F401 (imported here, not at the top: the plan needs no torch)
    except ImportError as e:
        raise SystemExit("probe: measuring needs PyTorch (torch >= 2.1 with CUDA or ROCm): %s "
                         "(--dry-run prints the plan without it)" % e)
    return torch


def utc_now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()


def command_line(argv=None):
    return shlex.join(["python3"] + list(sys.argv if argv is None else argv))


def budget_text(minutes):
    return "none (the full grid)" if not minutes else "%g min" % minutes


def _run(cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    out = r.stdout.strip().splitlines()
    return out[0].strip() if r.returncode == 0 and out else None


def driver_version(torch):
    """The GPU driver's version: NVML (pynvml), nvidia-smi, or on ROCm the amdgpu module's."""
    if getattr(torch.version, "hip", None):
        v = _run(["cat", "/sys/module/amdgpu/version"])
        return v or _run(["rocm-smi", "--showdriverversion", "--csv"])
    try:
        import pynvml
        pynvml.nvmlInit()
        v = pynvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else v
    except Exception:   # not installed, or no NVML: ask nvidia-smi
        pass
    return _run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])


def nccl_version(torch):
    try:
        v = torch.cuda.nccl.version()
    except Exception:
        return None
    return ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)


def provenance(torch, device, minutes, argv=None, extra=None):
    """The header of a sample file as a dict (csvout.comment_lines writes it)."""
    info = {"probe": PROBE}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
        info["gpu_count"] = torch.cuda.device_count()
        info["driver"] = driver_version(torch)
    else:
        info["gpu"] = "none (%s)" % device.type
        info["gpu_count"] = 0
    info["cuda"] = torch.version.cuda
    info["rocm"] = getattr(torch.version, "hip", None)
    info["torch"] = torch.__version__
    info["nccl"] = nccl_version(torch)
    info["hostname"] = socket.gethostname()
    info["date"] = utc_now()
    info["command"] = command_line(argv)
    info["budget"] = budget_text(minutes)
    info.update(extra or {})
    return info
