package main

import (
	"os"
	"path/filepath"
)

// allowTemp is the --allow-location value for tests whose tables live
// under the temp dir: they list their root, as a deployment must.
func allowTemp() string { return "file://" + filepath.ToSlash(os.TempDir()) + "/**" }
