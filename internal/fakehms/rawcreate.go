package fakehms

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	hm "github.com/beltran/gohive/hive_metastore"
)

// CreateTableUnset creates t in the metastore at url (create_table) the
// way a Java client does for fields it leaves null: the fields at the
// given paths inside the Table (field ids joined by ".", e.g. "7.7.1" for
// sd.serdeInfo.name, "10" for viewOriginalText) are not sent at all, where
// gohive's generated code would send them as "" — so the stored record has
// them unset, as one Spark registered has. The fields left out must be
// strings, i32s, or structs and containers of those.
func CreateTableUnset(ctx context.Context, url string, t *hm.Table, unset ...string) error {
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", strings.TrimPrefix(url, "thrift://"))
	if err != nil {
		return err
	}
	defer func() { _ = nc.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	bin := thrift.NewTBinaryProtocolConf(thrift.NewStreamTransportRW(nc), &thrift.TConfiguration{})
	// create_table's Table is its arguments' field 1.
	w := &dropFields{TProtocol: bin, drop: make([]string, len(unset))}
	for i, u := range unset {
		w.drop[i] = "1." + u
	}
	if err := w.WriteMessageBegin(ctx, "create_table", thrift.CALL, 1); err != nil {
		return err
	}
	if err := (&hm.ThriftHiveMetastoreCreateTableArgs{Tbl: t}).Write(ctx, w); err != nil {
		return err
	}
	if err := w.WriteMessageEnd(ctx); err != nil {
		return err
	}
	if err := w.Flush(ctx); err != nil {
		return err
	}
	if _, typ, _, err := bin.ReadMessageBegin(ctx); err != nil || typ == thrift.EXCEPTION {
		return fmt.Errorf("create_table %s.%s: %v (message type %d)", t.DbName, t.TableName, err, typ)
	}
	res := map[string]string{}
	if err := decode(ctx, bin, thrift.STRUCT, "", res); err != nil {
		return err
	}
	if len(res) > 0 { // create_table returns void: any field is an exception
		return fmt.Errorf("create_table %s.%s: %v", t.DbName, t.TableName, res)
	}
	return nil
}

// dropFields is a writing protocol that leaves out the fields at drop
// (paths of struct field ids from the arguments struct).
type dropFields struct {
	thrift.TProtocol
	drop  []string
	path  []int16 // field id being written at each open struct
	depth int     // > 0: inside a dropped field, this deep in structs/containers
}

func (w *dropFields) pathText() string {
	parts := make([]string, len(w.path))
	for i, id := range w.path {
		parts[i] = strconv.Itoa(int(id))
	}
	return strings.Join(parts, ".")
}

func (w *dropFields) WriteStructBegin(ctx context.Context, name string) error {
	if w.depth > 0 {
		w.depth++
		return nil
	}
	w.path = append(w.path, 0)
	return w.TProtocol.WriteStructBegin(ctx, name)
}

func (w *dropFields) WriteStructEnd(ctx context.Context) error {
	if w.depth > 0 {
		w.depth--
		return nil
	}
	w.path = w.path[:len(w.path)-1]
	return w.TProtocol.WriteStructEnd(ctx)
}

func (w *dropFields) WriteFieldBegin(ctx context.Context, name string, typ thrift.TType, id int16) error {
	if w.depth > 0 {
		return nil
	}
	w.path[len(w.path)-1] = id
	if slices.Contains(w.drop, w.pathText()) {
		w.depth = 1
		return nil
	}
	return w.TProtocol.WriteFieldBegin(ctx, name, typ, id)
}

func (w *dropFields) WriteFieldEnd(ctx context.Context) error {
	switch w.depth {
	case 0:
		return w.TProtocol.WriteFieldEnd(ctx)
	case 1:
		w.depth = 0
	}
	return nil
}

func (w *dropFields) WriteFieldStop(ctx context.Context) error {
	if w.depth > 0 {
		return nil
	}
	return w.TProtocol.WriteFieldStop(ctx)
}

func (w *dropFields) WriteMapBegin(ctx context.Context, kt, vt thrift.TType, n int) error {
	if w.depth > 0 {
		w.depth++
		return nil
	}
	return w.TProtocol.WriteMapBegin(ctx, kt, vt, n)
}

func (w *dropFields) WriteMapEnd(ctx context.Context) error {
	if w.depth > 0 {
		w.depth--
		return nil
	}
	return w.TProtocol.WriteMapEnd(ctx)
}

func (w *dropFields) WriteListBegin(ctx context.Context, et thrift.TType, n int) error {
	if w.depth > 0 {
		w.depth++
		return nil
	}
	return w.TProtocol.WriteListBegin(ctx, et, n)
}

func (w *dropFields) WriteListEnd(ctx context.Context) error {
	if w.depth > 0 {
		w.depth--
		return nil
	}
	return w.TProtocol.WriteListEnd(ctx)
}

func (w *dropFields) WriteString(ctx context.Context, v string) error {
	if w.depth > 0 {
		return nil
	}
	return w.TProtocol.WriteString(ctx, v)
}

func (w *dropFields) WriteI32(ctx context.Context, v int32) error {
	if w.depth > 0 {
		return nil
	}
	return w.TProtocol.WriteI32(ctx, v)
}
