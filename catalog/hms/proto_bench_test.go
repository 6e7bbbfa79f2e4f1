package hms

import (
	"context"
	"strconv"
	"testing"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"
)

// BenchmarkReadBatch decodes one get_table_objects_by_name_req reply of
// 100 Spark-registered tables through the reading protocol (skipped
// fields and presence recorded), as a steady cycle does per batch.
func BenchmarkReadBatch(b *testing.B) {
	ctx := context.Background()
	res := hm.NewGetTablesResult_()
	for i := range 100 {
		tb := sparkRegistered("db", "t"+strconv.Itoa(i), "file:/tmp/db.db", "file:/data/t"+strconv.Itoa(i))
		tb.Parameters[KeyLastUpdateVersion] = "7"
		res.Tables = append(res.Tables, tb)
	}
	buf := thrift.NewTMemoryBuffer()
	w := thrift.NewTBinaryProtocolConf(buf, nil)
	reply := &hm.ThriftHiveMetastoreGetTableObjectsByNameReqResult{Success: res}
	if err := reply.Write(ctx, w); err != nil {
		b.Fatal(err)
	}
	raw := append([]byte(nil), buf.Bytes()...)
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		buf.Reset()
		_, _ = buf.Write(raw)
		rec := &skipRecorder{TProtocol: thrift.NewTBinaryProtocolConf(buf, nil)}
		got := hm.NewThriftHiveMetastoreGetTableObjectsByNameReqResult()
		if err := got.Read(ctx, rec); err != nil {
			b.Fatal(err)
		}
		if len(presenceOfElements(rec.present, "0.1")) != len(got.Success.Tables) {
			b.Fatal("presence not recorded for every table")
		}
	}
}
