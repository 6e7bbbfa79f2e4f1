package hms

import (
	"context"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"
)

// TestFieldFilter: an alter's Table written through the filter, with the
// presence of a read, and read back through the recorder: a field the
// read did not have and that is still zero is left out (a struct's,
// a list element's by index); one the read had is written even when
// empty; one the read did not have but that now holds a value is written.
func TestFieldFilter(t *testing.T) {
	const all = ^uint64(0)
	read := Presence{
		"":       all &^ (1<<10 | 1<<11), // no view texts
		"7":      all,
		"7.7":    all &^ (1 << 1),    // serde without a name
		"7.1[0]": 1<<1 | 1<<2,        // a column without a comment
		"7.1[1]": 1<<1 | 1<<2 | 1<<3, // one with an empty comment
	}
	tbl := hm.NewTable()
	tbl.DbName, tbl.TableName, tbl.ViewExpandedText = "db", "t", "now set"
	tbl.Sd = hm.NewStorageDescriptor()
	tbl.Sd.SerdeInfo = &hm.SerDeInfo{SerializationLib: "lazy", Parameters: map[string]string{"path": "/x"}}
	tbl.Sd.Cols = []*hm.FieldSchema{{Name: "a", Type: "int"}, {Name: "b", Type: "int"}, {Name: "c", Type: "int"}}

	ctx := context.Background()
	buf := thrift.NewTMemoryBuffer()
	f := &fieldFilter{TProtocol: thrift.NewTBinaryProtocolConf(buf, nil)}
	f.set("3", read.absent)
	args := &hm.ThriftHiveMetastoreAlterTableWithEnvironmentContextArgs{Dbname: "db", TblName: "t", NewTbl_: tbl, EnvironmentContext: hm.NewEnvironmentContext()}
	if err := f.WriteMessageBegin(ctx, "alter_table_with_environment_context", thrift.CALL, 1); err != nil {
		t.Fatal(err)
	}
	if err := args.Write(ctx, f); err != nil {
		t.Fatal(err)
	}
	if err := f.WriteMessageEnd(ctx); err != nil {
		t.Fatal(err)
	}

	rec := &skipRecorder{TProtocol: thrift.NewTBinaryProtocolConf(buf, nil)}
	if _, _, _, err := rec.ReadMessageBegin(ctx); err != nil {
		t.Fatal(err)
	}
	back := hm.NewThriftHiveMetastoreAlterTableWithEnvironmentContextArgs()
	if err := back.Read(ctx, rec); err != nil {
		t.Fatal(err)
	}
	got := presenceUnder(rec.present, "3")
	for _, c := range []struct {
		path string
		sent bool
	}{
		{"10", false}, {"11", true}, {"2", true}, {"7.7.1", false}, {"7.7.2", true},
		{"7.1[0].3", false}, {"7.1[1].3", true}, {"7.1[2].3", true},
	} {
		if sent := !got.absent(c.path); sent != c.sent {
			t.Errorf("field %s sent = %v, want %v (presence written %v)", c.path, sent, c.sent, got)
		}
	}
	if back.NewTbl_.ViewExpandedText != "now set" || len(back.NewTbl_.Sd.Cols) != 3 || back.NewTbl_.Sd.SerdeInfo.Parameters["path"] != "/x" {
		t.Errorf("the table read back differs: %+v", back.NewTbl_)
	}
}
