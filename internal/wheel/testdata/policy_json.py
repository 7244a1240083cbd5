"""Prints the path of the pinned auditwheel's manylinux-policy.json."""
import os

import auditwheel.policy

print(os.path.join(os.path.dirname(auditwheel.policy.__file__), "manylinux-policy.json"))
