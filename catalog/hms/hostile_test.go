package hms

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
)

// hostileHMS answers every call with a reply whose success field claims a
// list of n elements and then sends nothing more (it holds the connection
// open until the test ends). It returns the thrift:// URL.
func hostileHMS(t *testing.T, elem thrift.TType, n int32) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { close(done); _ = ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				ctx := context.Background()
				trans := thrift.NewStreamTransportRW(nc)
				p := thrift.NewTBinaryProtocolConf(trans, &thrift.TConfiguration{})
				name, _, seq, err := p.ReadMessageBegin(ctx)
				if err != nil {
					return
				}
				if err := p.Skip(ctx, thrift.STRUCT); err != nil {
					return
				}
				_ = p.ReadMessageEnd(ctx)
				_ = p.WriteMessageBegin(ctx, name, thrift.REPLY, seq)
				_ = p.WriteStructBegin(ctx, "result")
				_ = p.WriteFieldBegin(ctx, "success", thrift.LIST, 0)
				_ = p.WriteListBegin(ctx, elem, int(n))
				_ = p.Flush(ctx)
				<-done
			}()
		}
	}()
	return "thrift://" + ln.Addr().String()
}

// TestHostileReplyIsBoundedInMemory: a metastore (or something posing as
// one) that answers get_all_databases with a list header claiming ten
// million names, then nothing, gets an error naming the call at once, not
// an allocation sized by the claim: thrift's decoder bounds a container by
// TConfiguration.MaxMessageSize times its smallest element, and the
// generated code allocates the list at the claimed size before reading an
// element. At thrift's default bound (100 MB) the claim is accepted and
// ~160 MB of string headers is allocated before the read stalls; at the
// client's (16 MiB) it is refused.
func TestHostileReplyIsBoundedInMemory(t *testing.T) {
	u := hostileHMS(t, thrift.STRING, 10_000_000)
	c, err := New(u, Options{Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = c.Databases(context.Background())
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a reply claiming ten million databases and holding none was accepted")
	}
	if !strings.Contains(err.Error(), "get_all_databases") || !strings.Contains(err.Error(), "size") {
		t.Errorf("error %q does not name the call and the size bound", err)
	}
	var te thrift.TProtocolException
	if !errors.As(err, &te) || te.TypeId() != thrift.SIZE_LIMIT {
		t.Errorf("error %v is not thrift's size limit", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("the refused reply cost %d MB of allocation; want under 32", got>>20)
	}
}
