package hms

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"
)

// TestHungServer: a server that accepts and never answers costs one
// Timeout (or the context's deadline), never a hang, and the error names
// the call and the table.
func TestHungServer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	c, err := New("thrift://"+l.Addr().String(), Options{Timeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.GetTable(context.Background(), "db", "t")
	if err == nil || !strings.Contains(err.Error(), "get_table_req hive.db.t") || time.Since(start) > 5*time.Second {
		t.Errorf("GetTable on a hung server = %v after %s", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	c2, _ := New("thrift://"+l.Addr().String(), Options{Timeout: time.Hour})
	start = time.Now()
	_, err = c2.TableNames(ctx, "db")
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("TableNames cancelled = %v after %s", err, time.Since(start))
	}
}

func TestNewURL(t *testing.T) {
	for _, u := range []string{"http://h:9083", "thrift://", "thrift://h:1/x", "thrift://u@h:1", "thrift://h:1?x=1"} {
		if _, err := New(u, Options{}); err == nil {
			t.Errorf("New(%q): want an error", u)
		}
	}
	c, err := New("thrift://h", Options{})
	if err != nil || c.addr != "h:9083" {
		t.Errorf("default port: %v %v", c, err)
	}
}
