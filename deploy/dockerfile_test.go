package deploy

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// No Docker engine runs in CI, so the image is never built here. This test
// parses deploy/Dockerfile structurally instead: the stages, the static,
// version-stamped build, a non-root final user, an exec-form ENTRYPOINT.

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	cmd  string // upper-cased
	args string
	line int
}

// stage is a FROM and the instructions after it.
type stage struct {
	image, name string
	flags       []string
	body        []instruction
}

func parseDockerfile(t *testing.T, src string) []stage {
	t.Helper()
	var ins []instruction
	var cur strings.Builder
	start := 0
	for i, raw := range strings.Split(src, "\n") {
		line := strings.TrimSpace(raw)
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() > 0 && strings.HasPrefix(line, "#") {
			continue // comment inside a continued instruction
		}
		if cur.Len() == 0 {
			start = i + 1
		}
		cont := strings.HasSuffix(line, `\`)
		cur.WriteString(strings.TrimSuffix(line, `\`))
		cur.WriteString(" ")
		if cont {
			continue
		}
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur.String()), " ")
		ins = append(ins, instruction{cmd: strings.ToUpper(cmd), args: strings.TrimSpace(args), line: start})
		cur.Reset()
	}
	if cur.Len() > 0 {
		t.Fatalf("Dockerfile ends inside a continued instruction")
	}
	var stages []stage
	for _, in := range ins {
		if in.cmd == "FROM" {
			var st stage
			f := strings.Fields(in.args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				st.flags = append(st.flags, f[0])
				f = f[1:]
			}
			if len(f) == 0 {
				t.Fatalf("line %d: FROM without an image", in.line)
			}
			st.image = f[0]
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			} else if len(f) != 1 {
				t.Fatalf("line %d: FROM %q: want `FROM image [AS name]`", in.line, in.args)
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if in.cmd != "ARG" {
				t.Fatalf("line %d: %s before the first FROM", in.line, in.cmd)
			}
			continue
		}
		stages[len(stages)-1].body = append(stages[len(stages)-1].body, in)
	}
	return stages
}

func (s stage) all(cmd string) []instruction {
	var out []instruction
	for _, in := range s.body {
		if in.cmd == cmd {
			out = append(out, in)
		}
	}
	return out
}

func (s stage) last(cmd string) (instruction, bool) {
	all := s.all(cmd)
	if len(all) == 0 {
		return instruction{}, false
	}
	return all[len(all)-1], true
}

func (s stage) hasArg(name string) bool {
	for _, a := range s.all("ARG") {
		if a.args == name || strings.HasPrefix(a.args, name+"=") {
			return true
		}
	}
	return false
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t, readFile(t, "Dockerfile"))
	if len(stages) != 2 {
		t.Fatalf("want 2 stages (build, runtime), got %d", len(stages))
	}
	build, final := stages[0], stages[1]

	t.Run("build stage", func(t *testing.T) {
		release := releaseToolchain(t)
		tag, ok := strings.CutPrefix(build.image, "golang:")
		if !ok || build.name == "" {
			t.Errorf("build stage FROM %s AS %q: want golang:<version> with a name", build.image, build.name)
		} else if v, _, _ := strings.Cut(tag, "-"); goVersionLess(v, strings.TrimPrefix(release, "go")) {
			t.Errorf("build stage FROM %s: older than the release toolchain %s (.ci/release.sh); the image would ship the vulnerabilities the release build is free of", build.image, release)
		}
		if !build.hasArg("VERSION") {
			t.Errorf("build stage lacks ARG VERSION")
		}
		var goBuild string
		for _, r := range build.all("RUN") {
			if strings.Contains(r.args, "go build") {
				goBuild = r.args
			}
		}
		for _, want := range []string{"CGO_ENABLED=0", "-trimpath", `-ldflags "-s -w -X main.version=${VERSION}"`, "./cmd/deltasync"} {
			if !strings.Contains(goBuild, want) {
				t.Errorf("go build %q lacks %s", goBuild, want)
			}
		}
	})

	t.Run("runtime stage", func(t *testing.T) {
		if !strings.HasPrefix(final.image, "gcr.io/distroless/static") && final.image != "scratch" {
			t.Errorf("runtime FROM %s: want distroless static or scratch", final.image)
		}
		var copied string
		for _, c := range final.all("COPY") {
			if strings.Contains(c.args, "--from="+build.name) {
				f := strings.Fields(c.args)
				copied = f[len(f)-1]
			}
		}
		if copied == "" {
			t.Fatalf("no COPY --from=%s of the binary", build.name)
		}
		user, ok := final.last("USER")
		if !ok {
			t.Fatalf("runtime stage has no USER: it would run as root")
		}
		uid, _, _ := strings.Cut(user.args, ":")
		if uid == "" || uid == "0" || uid == "root" {
			t.Errorf("USER %q: want a non-root user", user.args)
		}
		if strings.Trim(uid, "0123456789") != "" {
			t.Errorf("USER %q: want a numeric uid so Kubernetes runAsNonRoot can verify it", user.args)
		}
		ep, ok := final.last("ENTRYPOINT")
		if !ok {
			t.Fatalf("no ENTRYPOINT")
		}
		var argv []string
		if err := json.Unmarshal([]byte(ep.args), &argv); err != nil || len(argv) == 0 {
			t.Fatalf("ENTRYPOINT %s: want exec form (JSON array): %v", ep.args, err)
		}
		if argv[0] != copied {
			t.Errorf("ENTRYPOINT runs %s, but the binary is copied to %s", argv[0], copied)
		}
		if !final.hasArg("VERSION") {
			t.Errorf("runtime stage lacks ARG VERSION (needed for the version label)")
		}
		var labels string
		for _, l := range final.all("LABEL") {
			labels += l.args + " "
		}
		for _, want := range []string{`org.opencontainers.image.version="${VERSION}"`, "org.opencontainers.image.revision=", "org.opencontainers.image.source="} {
			if !strings.Contains(labels, want) {
				t.Errorf("LABELs lack %s", want)
			}
		}
		if expose, ok := final.last("EXPOSE"); !ok || expose.args != "9464" {
			t.Errorf("EXPOSE = %q, want 9464", expose.args)
		}
	})
}

// TestDockerignore: the build context filter must keep what `go build`
// needs (the module files and every package the binary imports).
func TestDockerignore(t *testing.T) {
	needed := []string{"go.mod", "go.sum", "cmd", "sync", "deltalog", "catalog"}
	for _, line := range strings.Split(readFile(t, "Dockerfile.dockerignore"), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "!") {
			continue
		}
		for _, n := range needed {
			if line == n || strings.HasPrefix(line, n+"/") || line == "*" || line == "**" || line == "/"+n {
				t.Errorf("Dockerfile.dockerignore excludes %s (pattern %q), which the build needs", n, line)
			}
		}
	}
}

// releaseToolchain is the toolchain .ci/release.sh builds releases with
// (RELEASE_GOTOOLCHAIN's default, "go1.27.3").
func releaseToolchain(t *testing.T) string {
	t.Helper()
	m := regexp.MustCompile(`RELEASE_GOTOOLCHAIN="\$\{RELEASE_GOTOOLCHAIN:-(go[0-9.]+)\}"`).FindStringSubmatch(readFile(t, "../.ci/release.sh"))
	if m == nil {
		t.Fatal(`.ci/release.sh: no RELEASE_GOTOOLCHAIN="${RELEASE_GOTOOLCHAIN:-goX.Y.Z}"`)
	}
	return m[1]
}

// goVersionLess compares Go versions "1.27.3", "1.27", "1.26.10" by their
// numbers; a missing part is 0 ("1.27" counts as 1.27.0, older than 1.27.3).
func goVersionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < 3; i++ {
		x, y := 0, 0
		if i < len(pa) {
			x, _ = strconv.Atoi(pa[i])
		}
		if i < len(pb) {
			y, _ = strconv.Atoi(pb[i])
		}
		if x != y {
			return x < y
		}
	}
	return false
}

func TestGoVersionLess(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1.26", "1.27.3", true}, {"1.27.2", "1.27.3", true}, {"1.27.3", "1.27.3", false},
		{"1.27.10", "1.27.3", false}, {"1.28", "1.27.3", false}, {"1.26.10", "1.26.9", false},
	} {
		if got := goVersionLess(tc.a, tc.b); got != tc.want {
			t.Errorf("goVersionLess(%s, %s) = %v", tc.a, tc.b, got)
		}
	}
}
