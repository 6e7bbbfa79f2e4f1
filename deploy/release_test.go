package deploy

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/deltasync/deltasync/internal/testenv"
)

// releaseDist returns the directory .ci/release.sh wrote
// (DELTASYNC_RELEASE_DIST, set by .ci/test.sh after building it), or skips.
func releaseDist(t *testing.T) string {
	t.Helper()
	dist := testenv.Getenv(t, "DELTASYNC_RELEASE_DIST", testenv.External,
		"DELTASYNC_RELEASE_DIST unset (make release, then DELTASYNC_RELEASE_DIST=dist)")
	abs, err := filepath.Abs(dist)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// releaseBinaries lists dist's binaries by "os/arch".
func releaseBinaries(t *testing.T, dist string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dist, "deltasync-*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, ".cdx.json") {
			continue
		}
		parts := strings.Split(filepath.Base(f), "-")
		if len(parts) < 4 {
			t.Errorf("%s: want deltasync-VERSION-OS-ARCH", f)
			continue
		}
		out[parts[len(parts)-2]+"/"+parts[len(parts)-1]] = f
	}
	return out
}

// TestReleaseArtifacts checks what `make release` built, from the binaries
// themselves: the release toolchain, static (CGO_ENABLED=0, no ELF
// interpreter or shared libraries), -trimpath, the version stamped; a
// CycloneDX SBOM beside each; SHA256SUMS naming every file with its hash.
func TestReleaseArtifacts(t *testing.T) {
	dist := releaseDist(t)
	release := releaseToolchain(t)
	bins := releaseBinaries(t, dist)
	targets := strings.Fields(os.Getenv("RELEASE_TARGETS"))
	if len(targets) == 0 {
		targets = []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}
	}
	for _, target := range targets {
		if bins[target] == "" {
			t.Errorf("no release binary for %s in %s", target, dist)
		}
	}
	for target, bin := range bins {
		t.Run(strings.ReplaceAll(target, "/", "-"), func(t *testing.T) {
			info, err := buildinfo.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if info.GoVersion != release {
				t.Errorf("built with %s, want the release toolchain %s", info.GoVersion, release)
			}
			settings := map[string]string{}
			for _, s := range info.Settings {
				settings[s.Key] = s.Value
			}
			goos, goarch, _ := strings.Cut(target, "/")
			for k, want := range map[string]string{"CGO_ENABLED": "0", "-trimpath": "true", "GOOS": goos, "GOARCH": goarch} {
				if settings[k] != want {
					t.Errorf("build setting %s=%q, want %q", k, settings[k], want)
				}
			}
			parts := strings.Split(filepath.Base(bin), "-")
			version := strings.Join(parts[1:len(parts)-2], "-")
			// -trimpath keeps -ldflags out of the build info: look for the
			// stamp itself, and ask the binary where it runs here.
			b, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte(version)) {
				t.Errorf("version %s is not stamped into the binary", version)
			}
			if goos == runtime.GOOS && goarch == runtime.GOARCH {
				out, err := exec.Command(bin, "--version").CombinedOutput()
				if err != nil || !strings.Contains(string(out), version) {
					t.Errorf("%s --version: %v, %q; want %s", bin, err, out, version)
				}
			}
			if info.Path != "github.com/deltasync/deltasync/cmd/deltasync" {
				t.Errorf("main package %s", info.Path)
			}
			if goos == "linux" {
				checkStaticELF(t, bin)
			}
			checkSBOM(t, bin+".cdx.json", info)
		})
	}
	checkSums(t, dist)
}

func checkStaticELF(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("%s has an ELF interpreter: not static", bin)
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("%s needs shared libraries %v: not static", bin, libs)
	}
}

// checkSBOM: CycloneDX JSON whose components are the modules linked into
// the binary (its build info) at the same versions, and its standard library.
func checkSBOM(t *testing.T, path string, info *buildinfo.BuildInfo) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no SBOM beside the binary: %v", err)
	}
	var bom struct {
		BOMFormat  string `json:"bomFormat"`
		Components []struct {
			Name    string `json:"name"`
			Version string `json:"version"`
			PURL    string `json:"purl"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &bom); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if bom.BOMFormat != "CycloneDX" {
		t.Errorf("%s: bomFormat %q, want CycloneDX", path, bom.BOMFormat)
	}
	have := map[string]string{}
	for _, c := range bom.Components {
		have[c.Name] = c.Version
	}
	missing := 0
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		if v, ok := have[d.Path]; !ok || v != d.Version {
			missing++
			if missing <= 5 {
				t.Errorf("%s: module %s %s linked into the binary is not in the SBOM (got %q)", path, d.Path, d.Version, v)
			}
		}
	}
	if len(info.Deps) == 0 {
		t.Errorf("the binary records no modules")
	}
	if have["std"] != info.GoVersion {
		t.Errorf("%s: standard library %q, want the binary's %s", path, have["std"], info.GoVersion)
	}
}

// checkSums: SHA256SUMS lists every file in dist but itself, hash right.
func checkSums(t *testing.T, dist string) {
	t.Helper()
	f, err := os.Open(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	listed := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Errorf("SHA256SUMS line %q: want `sha256  name`", sc.Text())
			continue
		}
		listed[name] = sum
	}
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		if e.Name() != "SHA256SUMS" {
			files = append(files, e.Name())
		}
	}
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(dist, name))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); listed[name] != got {
			t.Errorf("SHA256SUMS: %s = %q, file hashes to %s", name, listed[name], got)
		}
	}
	for name := range listed {
		if !slices.Contains(files, name) {
			t.Errorf("SHA256SUMS lists %s, which is not in %s", name, dist)
		}
	}
}
