package hms

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"
)

// injector writes, just before the Table's own field stop, a field id the
// generated code does not know (as HMS 4.0 GA's Table fields 26-28 are to
// gohive), and a non-empty skewedColValueLocationMaps (SkewedInfo field 3,
// absent from gohive's IDL).
type injector struct {
	thrift.TProtocol
	structs []string
}

func (p *injector) WriteStructBegin(ctx context.Context, name string) error {
	p.structs = append(p.structs, name)
	return p.TProtocol.WriteStructBegin(ctx, name)
}

func (p *injector) WriteStructEnd(ctx context.Context) error {
	p.structs = p.structs[:len(p.structs)-1]
	return p.TProtocol.WriteStructEnd(ctx)
}

func (p *injector) WriteFieldStop(ctx context.Context) error {
	switch p.structs[len(p.structs)-1] {
	case "Table":
		_ = p.WriteFieldBegin(ctx, "txnId", thrift.I64, 28)
		_ = p.WriteI64(ctx, 7)
		_ = p.WriteFieldEnd(ctx)
	case "SkewedInfo":
		_ = p.WriteFieldBegin(ctx, "skewedColValueLocationMaps", thrift.MAP, 3)
		_ = p.WriteMapBegin(ctx, thrift.LIST, thrift.STRING, 1)
		_ = p.WriteListBegin(ctx, thrift.STRING, 1)
		_ = p.WriteString(ctx, "v")
		_ = p.WriteListEnd(ctx)
		_ = p.WriteString(ctx, "file:/x")
		_ = p.WriteMapEnd(ctx)
		_ = p.WriteFieldEnd(ctx)
	}
	return p.TProtocol.WriteFieldStop(ctx)
}

func encode(t *testing.T, tbl *hm.Table, inject bool) *thrift.TMemoryBuffer {
	t.Helper()
	buf := thrift.NewTMemoryBuffer()
	var p thrift.TProtocol = thrift.NewTBinaryProtocolConf(buf, nil)
	if inject {
		p = &injector{TProtocol: p}
	}
	if err := tbl.Write(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return buf
}

// TestSkipRecorder: a field the IDL does not know is recorded by its path
// (so the record is never written back without it); an empty one (the
// skewed-location map every non-skewed table carries) is not.
func TestSkipRecorder(t *testing.T) {
	tbl := sparkRegistered("db", "t", "file:/w", "file:/w/t")
	tbl.Sd.SkewedInfo = &hm.SkewedInfo{SkewedColNames: []string{}, SkewedColValues: [][]string{}}
	for _, tc := range []struct {
		inject bool
		want   []string
	}{{false, nil}, {true, []string{"7.11.3", "28"}}} {
		rec := &skipRecorder{TProtocol: thrift.NewTBinaryProtocolConf(encode(t, tbl, tc.inject), nil)}
		got := hm.NewTable()
		if err := got.Read(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rec.skipped, tc.want) {
			t.Errorf("inject=%v: skipped %v, want %v", tc.inject, rec.skipped, tc.want)
		}
		if got.Sd.SerdeInfo.Parameters["path"] != "file:/w/t" || got.Parameters[KeyProvider] != "delta" {
			t.Errorf("inject=%v: decoded table is wrong: %+v", tc.inject, got)
		}
	}
	// An empty skewed-location map (what HMS sends) is read and not recorded.
	buf := thrift.NewTMemoryBuffer()
	p := thrift.NewTBinaryProtocolConf(buf, nil)
	ctx := context.Background()
	_ = p.WriteStructBegin(ctx, "SkewedInfo")
	_ = p.WriteFieldBegin(ctx, "skewedColValueLocationMaps", thrift.MAP, 3)
	_ = p.WriteMapBegin(ctx, thrift.LIST, thrift.STRING, 0)
	_ = p.WriteMapEnd(ctx)
	_ = p.WriteFieldEnd(ctx)
	_ = p.WriteFieldStop(ctx)
	_ = p.WriteStructEnd(ctx)
	rec := &skipRecorder{TProtocol: thrift.NewTBinaryProtocolConf(buf, nil)}
	if err := hm.NewSkewedInfo().Read(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.skipped) != 0 {
		t.Errorf("an empty map was recorded as lost: %v", rec.skipped)
	}
}

// TestAlterRefusesLostFields: a read that lost fields is never written.
func TestAlterRefusesLostFields(t *testing.T) {
	c, err := New("thrift://127.0.0.1:1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	read := &Table{Thrift: sparkRegistered("db", "t", "file:/w", "file:/w/t"), Lost: []string{"28"}}
	err = c.AlterTable(context.Background(), read, cloneTable(read.Thrift), Guard{})
	var he *Error
	if !errors.Is(err, ErrUnknownFields) || !errors.As(err, &he) || he.Table != "hive.db.t" {
		t.Errorf("AlterTable of a lossy read = %v, want ErrUnknownFields naming hive.db.t", err)
	}
}
