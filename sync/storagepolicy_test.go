package sync

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestStoragePolicyResolve(t *testing.T) {
	pol, err := NewStoragePolicy(
		[]string{"s3://lake-prod/warehouse/**", "s3://lake-*/shared/*/t", "file:/srv/tables/**", "abfss://c@acct01.dfs.core.windows.net/**"},
		[]BucketOptions{
			{Location: "s3://lake-prod", Options: map[string]string{"endpoint": "http://127.0.0.1:9000", "use_path_style": "true", "region": "eu-west-1"}},
			{Location: "abfss://c@acct01.dfs.core.windows.net", Options: map[string]string{"protocol": "http"}},
		})
	if err != nil {
		t.Fatal(err)
	}
	ok := map[string]string{
		"s3://lake-prod/warehouse/db/t":             "s3://lake-prod/warehouse/db/t?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&use_path_style=true",
		"s3a://lake-prod/warehouse/t/":              "s3://lake-prod/warehouse/t?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=eu-west-1&use_path_style=true",
		"s3://lake-dev/shared/x/t":                  "s3://lake-dev/shared/x/t",
		"file:/srv/tables/a/b":                      "file:///srv/tables/a/b",
		"/srv/tables/a":                             "file:///srv/tables/a",
		"abfss://c@acct01.dfs.core.windows.net/w/t": "azblob://c/w/t?protocol=http&storage_account=acct01",
	}
	for in, want := range ok {
		_, got, err := pol.Resolve(in)
		if err != nil || got != want {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"s3://lake-prod/other/t", "s3://lake-prod/warehouse2/t", "s3://lake-dev/shared/x/y/t", "s3://other/warehouse/t",
		"file:///srv/other", "file:///etc", "file:///etc/passwd", "gs://lake-prod/warehouse/t",
		"s3://lake-prod/warehouse/t?endpoint=http://127.0.0.1:1",
		"abfss://c@acct02.dfs.core.windows.net/w/t",
	} {
		_, got, err := pol.Resolve(in)
		var le *LocationError
		if !errors.As(err, &le) {
			t.Errorf("Resolve(%q) = %q, %v; want a *LocationError", in, got, err)
			continue
		}
		if strings.Contains(err.Error(), "127.0.0.1") {
			t.Errorf("Resolve(%q): error repeats the query: %v", in, err)
		}
	}
}

// Unset, the allow-list admits the cloud object stores and no local path;
// the message for a refused path is the same whether it exists or not.
func TestStoragePolicyDefault(t *testing.T) {
	var pol *StoragePolicy
	for _, in := range []string{"s3://any/t", "gs://any/t", "azblob://any/t", "abfss://c@acct01.dfs.core.windows.net/t"} {
		if _, _, err := pol.Resolve(in); err != nil {
			t.Errorf("default policy refuses %s: %v", in, err)
		}
	}
	_, _, e1 := pol.Resolve("file:///etc/passwd")
	_, _, e2 := pol.Resolve("file:///etc/no-such-file-here")
	if e1 == nil || e2 == nil {
		t.Fatalf("default policy reads local paths: %v %v", e1, e2)
	}
	m1 := strings.Replace(e1.Error(), "passwd", "X", 1)
	m2 := strings.Replace(e2.Error(), "no-such-file-here", "X", 1)
	if m1 != m2 {
		t.Errorf("existing and missing files are told apart:\n%s\n%s", m1, m2)
	}
}

// An allowed local path that is a symlink to somewhere else is refused.
func TestStoragePolicySymlinkedRoot(t *testing.T) {
	base := t.TempDir()
	allowed, secret := filepath.Join(base, "allowed"), filepath.Join(base, "secret")
	for _, d := range []string{allowed, secret, filepath.Join(allowed, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(allowed, "t")); err != nil {
		t.Skip(err)
	}
	if err := os.Symlink(filepath.Join(allowed, "real"), filepath.Join(allowed, "ok")); err != nil {
		t.Fatal(err)
	}
	pol, err := NewStoragePolicy([]string{"file://" + filepath.ToSlash(allowed) + "/**"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := pol.Resolve("file://" + filepath.ToSlash(filepath.Join(allowed, "t"))); err == nil {
		t.Error("a symlink out of the allowed directory was accepted")
	}
	if _, u, err := pol.Resolve("file://" + filepath.ToSlash(filepath.Join(allowed, "ok"))); err != nil || !strings.HasSuffix(u, "/allowed/real") {
		t.Errorf("symlink inside the allowed directory: %q, %v", u, err)
	}
}

func TestNewStoragePolicyErrors(t *testing.T) {
	_, err := NewStoragePolicy([]string{"ftp://x/**", "s3://b/t?x=1", "s3:///**"},
		[]BucketOptions{{Location: "s3://b/path"}, {Location: "s3://c", Options: map[string]string{"bogus": "1"}}, {Location: "file:///x"}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"ftp://x/**"`, `"s3://b/t?x=1"`, `"s3:///**"`, `"s3://b/path"`, "option bogus", `"file:///x"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %s:\n%v", want, err)
		}
	}
	// Each problem is a *PolicyError naming its entry; the caller names
	// the entries in its own words (cmd: storage.buckets[i]), sync never.
	type entry struct {
		bucket bool
		index  int
		option string
	}
	var got []entry
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var pe *PolicyError
		if !errors.As(e, &pe) || pe.Err == nil {
			t.Fatalf("%v (%T): want a *PolicyError with its cause", e, e)
		}
		got = append(got, entry{pe.Bucket, pe.Index, pe.Option})
	}
	want := []entry{{false, 0, ""}, {false, 1, ""}, {false, 2, ""}, {true, 0, ""}, {true, 1, "bogus"}, {true, 2, ""}}
	if !slices.Equal(got, want) {
		t.Errorf("problems %+v, want %+v", got, want)
	}
	if strings.Contains(err.Error(), "storage.") {
		t.Errorf("the config's key names leaked into sync's errors:\n%v", err)
	}
}
