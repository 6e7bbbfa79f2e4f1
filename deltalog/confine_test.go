package deltalog

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	confineProto  = `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`
	confineSchema = `{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}}]}`
)

// confineCommit is a valid first commit whose description, column and
// property carry marker.
func confineCommit(marker string) string {
	schema := strings.ReplaceAll(confineSchema, `\"id\"`, `\"`+marker+`_col\"`)
	return confineProto + "\n" + `{"metaData":{"id":"x","description":"` + marker + `","format":{"provider":"parquet","options":{}},"schemaString":"` +
		schema + `","partitionColumns":[],"configuration":{"secret.key":"` + marker + `"}}}` + "\n"
}

func writeFile(t *testing.T, p, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func loadDir(t *testing.T, url string) (*Snapshot, error) {
	t.Helper()
	tbl, err := Open(context.Background(), url)
	if err != nil {
		return nil, err
	}
	defer tbl.Close()
	return tbl.Load(context.Background(), LoadOptions{})
}

// A symlink that leaves the table directory is not followed, whether it
// is a commit file or _delta_log itself, and whether or not its target
// exists; the error never holds the target's content.
func TestLocalTableSymlinksStayInside(t *testing.T) {
	const marker = "TOPSECRET4711"
	base := t.TempDir()
	secret := filepath.Join(base, "protected")
	writeFile(t, filepath.Join(secret, "_delta_log", "00000000000000000000.json"), confineCommit(marker))

	fileLink := filepath.Join(base, "filelink")
	if err := os.MkdirAll(filepath.Join(fileLink, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(secret, "_delta_log", "00000000000000000000.json"), filepath.Join(fileLink, "_delta_log", "00000000000000000000.json"))

	dangling := filepath.Join(base, "dangling")
	if err := os.MkdirAll(filepath.Join(dangling, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(base, "nothing-here.json"), filepath.Join(dangling, "_delta_log", "00000000000000000000.json"))

	dirLink := filepath.Join(base, "dirlink")
	if err := os.MkdirAll(dirLink, 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join(secret, "_delta_log"), filepath.Join(dirLink, "_delta_log"))

	var msgs []string
	for _, dir := range []string{fileLink, dangling, dirLink} {
		_, err := loadDir(t, "file://"+dir)
		if err == nil {
			t.Fatalf("%s: loaded through a symlink leaving the table", dir)
		}
		if strings.Contains(err.Error(), marker) {
			t.Errorf("%s: error reveals the target's content: %v", dir, err)
		}
		if dir != dirLink && !errors.Is(err, ErrOutsideRoot) {
			t.Errorf("%s: err = %v, want ErrOutsideRoot", dir, err)
		}
		if !errors.Is(err, ErrOutsideRoot) && !errors.Is(err, ErrNotATable) {
			t.Errorf("%s: err = %v, want ErrOutsideRoot or ErrNotATable", dir, err)
		}
		msgs = append(msgs, strings.ReplaceAll(err.Error(), dir, "DIR"))
	}
	if msgs[0] != msgs[1] {
		t.Errorf("an existing and a missing symlink target are told apart:\n%s\n%s", msgs[0], msgs[1])
	}

	// A symlink inside the table directory is followed.
	inside := filepath.Join(base, "inside")
	writeFile(t, filepath.Join(inside, "real", "v0.json"), confineCommit("fine"))
	if err := os.MkdirAll(filepath.Join(inside, "_delta_log"), 0o755); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, filepath.Join("..", "real", "v0.json"), filepath.Join(inside, "_delta_log", "00000000000000000000.json"))
	if s, err := loadDir(t, "file://"+inside); err != nil || s.Metadata.Description != "fine" {
		t.Fatalf("symlink inside the table: %v", err)
	}
}

func mustSymlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
}

// file:/p (Hadoop's spelling) is the absolute path /p, not a path relative
// to the working directory.
func TestOpenHadoopFileURL(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "t", "_delta_log", "00000000000000000000.json"), confineCommit("hadoop"))
	for _, u := range []string{"file:" + dir + "/t", "file://" + dir + "/t", "FILE:" + dir + "/t/"} {
		s, err := loadDir(t, u)
		if err != nil || s.Metadata.Description != "hadoop" {
			t.Errorf("%s: %v", u, err)
		}
	}
	// A relative file: URL names no absolute path and is refused.
	if _, err := Open(context.Background(), "file:t"); err == nil {
		t.Error("file:t (relative) opened")
	}
}

// An action of the wrong JSON type is corrupt input, reported with the
// file and line.
func TestLoadRefusesActionOfWrongType(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "_delta_log", "00000000000000000000.json"), confineCommit("x")+`{"add":"x"}`+"\n")
	_, err := loadDir(t, dir)
	var le *LogError
	if !errors.As(err, &le) || !errors.Is(err, ErrCorrupt) || le.Line != 3 || !strings.HasSuffix(le.File, "00000000000000000000.json") {
		t.Fatalf("err = %v, want ErrCorrupt at 00000000000000000000.json line 3", err)
	}
}
