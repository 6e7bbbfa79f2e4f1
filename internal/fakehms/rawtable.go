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

// RawTable reads db.table from the metastore at url (thrift://host:port)
// with get_table_req and decodes the reply with no generated struct: a
// generic binary-protocol walk that keeps every field the server sent,
// known to gohive's IDL or not. The result maps each field's path inside
// the Table to its value: field ids joined by ".", list elements as
// "[i]", map entries as "{key}"; a struct is "struct", a container
// "list(n)", "set(n)" or "map(n)" (so an empty one differs from an
// absent one), a scalar its type and value ("string:\"\"", "i32:0").
// A field absent from the reply is absent from the map.
func RawTable(ctx context.Context, url, db, table string) (map[string]string, error) {
	addr := strings.TrimPrefix(url, "thrift://")
	var d net.Dialer
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	defer func() { _ = nc.Close() }()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	prot := thrift.NewTBinaryProtocolConf(thrift.NewStreamTransportRW(nc), &thrift.TConfiguration{})
	req := hm.NewGetTableRequest()
	cat := "hive"
	req.DbName, req.TblName, req.CatName = db, table, &cat
	if err := prot.WriteMessageBegin(ctx, "get_table_req", thrift.CALL, 1); err != nil {
		return nil, err
	}
	if err := (&hm.ThriftHiveMetastoreGetTableReqArgs{Req: req}).Write(ctx, prot); err != nil {
		return nil, err
	}
	if err := prot.WriteMessageEnd(ctx); err != nil {
		return nil, err
	}
	if err := prot.Flush(ctx); err != nil {
		return nil, err
	}
	_, typ, _, err := prot.ReadMessageBegin(ctx)
	if err != nil {
		return nil, err
	}
	if typ == thrift.EXCEPTION {
		return nil, fmt.Errorf("get_table_req %s.%s: an application exception", db, table)
	}
	all := map[string]string{}
	if err := decode(ctx, prot, thrift.STRUCT, "", all); err != nil {
		return nil, err
	}
	// success (0) → GetTableResult.table (1) → the Table's own fields.
	out := map[string]string{}
	for k, v := range all {
		if rest, ok := strings.CutPrefix(k, "0.1."); ok {
			out[rest] = v
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("get_table_req %s.%s: no table in the reply (%v)", db, table, all)
	}
	return out, nil
}

func join(path, part string) string {
	if path == "" {
		return part
	}
	if strings.HasPrefix(part, "[") || strings.HasPrefix(part, "{") {
		return path + part
	}
	return path + "." + part
}

// decode reads one value of type typ at path into out.
func decode(ctx context.Context, p thrift.TProtocol, typ thrift.TType, path string, out map[string]string) error {
	set := func(v string) {
		if path != "" {
			out[path] = v
		}
	}
	switch typ {
	case thrift.STRUCT:
		set("struct")
		if _, err := p.ReadStructBegin(ctx); err != nil {
			return err
		}
		for {
			_, ft, id, err := p.ReadFieldBegin(ctx)
			if err != nil {
				return err
			}
			if ft == thrift.STOP {
				break
			}
			if err := decode(ctx, p, ft, join(path, strconv.Itoa(int(id))), out); err != nil {
				return err
			}
			if err := p.ReadFieldEnd(ctx); err != nil {
				return err
			}
		}
		return p.ReadStructEnd(ctx)
	case thrift.MAP:
		kt, vt, n, err := p.ReadMapBegin(ctx)
		if err != nil {
			return err
		}
		set(fmt.Sprintf("map(%d)", n))
		for i := range n {
			key := map[string]string{}
			if err := decode(ctx, p, kt, "k", key); err != nil {
				return err
			}
			k := key["k"]
			if kt == thrift.STRING {
				k = strings.TrimSuffix(strings.TrimPrefix(k, `string:"`), `"`)
			} else if k == "" || strings.HasPrefix(k, "struct") || strings.Contains(k, "(") {
				k = "#" + strconv.Itoa(i) // a key that is no scalar: by position
			}
			if err := decode(ctx, p, vt, join(path, "{"+k+"}"), out); err != nil {
				return err
			}
		}
		return p.ReadMapEnd(ctx)
	case thrift.LIST, thrift.SET:
		read, end, kind := p.ReadListBegin, p.ReadListEnd, "list"
		if typ == thrift.SET {
			read, end, kind = p.ReadSetBegin, p.ReadSetEnd, "set"
		}
		et, n, err := read(ctx)
		if err != nil {
			return err
		}
		set(fmt.Sprintf("%s(%d)", kind, n))
		for i := range n {
			if err := decode(ctx, p, et, join(path, "["+strconv.Itoa(i)+"]"), out); err != nil {
				return err
			}
		}
		return end(ctx)
	case thrift.BOOL:
		v, err := p.ReadBool(ctx)
		set(fmt.Sprintf("bool:%v", v))
		return err
	case thrift.BYTE:
		v, err := p.ReadByte(ctx)
		set(fmt.Sprintf("byte:%d", v))
		return err
	case thrift.I16:
		v, err := p.ReadI16(ctx)
		set(fmt.Sprintf("i16:%d", v))
		return err
	case thrift.I32:
		v, err := p.ReadI32(ctx)
		set(fmt.Sprintf("i32:%d", v))
		return err
	case thrift.I64:
		v, err := p.ReadI64(ctx)
		set(fmt.Sprintf("i64:%d", v))
		return err
	case thrift.DOUBLE:
		v, err := p.ReadDouble(ctx)
		set(fmt.Sprintf("double:%v", v))
		return err
	case thrift.STRING:
		v, err := p.ReadString(ctx)
		set(fmt.Sprintf("string:%q", v))
		return err
	}
	return fmt.Errorf("field %s: thrift type %d not decodable", path, typ)
}

// RawDiff lists how after differs from before, path by path, in sorted
// order: "+path=v" (added), "-path=v" (removed), "path: a -> b" (changed).
func RawDiff(before, after map[string]string) []string {
	var out []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			out = append(out, "-"+k+"="+v)
		} else if w != v {
			out = append(out, k+": "+v+" -> "+w)
		}
	}
	for k, v := range after {
		if _, ok := before[k]; !ok {
			out = append(out, "+"+k+"="+v)
		}
	}
	slices.Sort(out)
	return out
}
