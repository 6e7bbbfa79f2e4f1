"""One delta-rs (python deltalake) load of TABLE_DIR's protocol and metadata,
for whole-process timing. Usage: python deltars_load.py TABLE_DIR"""

import sys

from deltalake import DeltaTable

t = DeltaTable(sys.argv[1])
print(t.version(), t.protocol().min_reader_version, t.metadata().id)
