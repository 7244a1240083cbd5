"""Prints what auditwheel (the pinned one of scripts/setup-dist-tools) reads
in ELF files and the manylinux tag their symbol versions allow, as JSON:
{"versions": [...], "tag": "manylinux_X_Y_ARCH"}. internal/wheel's tests
compare it with ours.

usage: python auditwheel_tag.py ARCH FILE...
"""
import json
import sys

from auditwheel.architecture import Architecture
from auditwheel.elfutils import elf_find_versioned_symbols
from auditwheel.libc import Libc
from auditwheel.policy import WheelPolicies
from elftools.elf.elffile import ELFFile

arch, files = sys.argv[1], sys.argv[2:]
needed = {}
for name in files:
    with open(name, "rb") as f:
        for lib, version in elf_find_versioned_symbols(ELFFile(f)):
            needed.setdefault(lib, set()).add(version)
policies = WheelPolicies(libc=Libc.GLIBC, arch=Architecture(arch))
tag = policies.versioned_symbols_policy(needed).name
print(json.dumps({"versions": sorted(set().union(*needed.values())) if needed else [], "tag": tag}))
