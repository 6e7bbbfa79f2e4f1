"""Have delta-rs (python `deltalake`) write a checkpoint at the latest version
of TABLE_DIR. Usage: python deltars_checkpoint.py TABLE_DIR"""

import sys
import time

import deltalake
from deltalake import DeltaTable

start = time.time()
t = DeltaTable(sys.argv[1])
t.create_checkpoint()
print("deltalake %s checkpointed version %d in %.1f s" % (deltalake.__version__, t.version(), time.time() - start))
