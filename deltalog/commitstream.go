package deltalog

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// streamCommitBytes is the largest commit read whole into one buffer; a
// bigger one (or one of unknown size) is parsed as it streams, so that a
// commit of 100 MB of add actions costs a read buffer, not 100 MB.
const streamCommitBytes = 1 << 20

// streamBufBytes is the read buffer of a streamed commit. Lines up to this
// long are parsed in place; a longer kept line (a metaData with a huge
// schema) is gathered in a buffer charged to the Load's budget, and a
// longer skipped line (an add with huge stats) is checked as it passes.
const streamBufBytes = 64 << 10

// commitReadBytes is what reading a commit of the listed size holds: the
// whole file when it is read into one buffer (a known size up to
// streamCommitBytes), else the read buffer it streams through. The memory
// pool reserves it before the GET (readCommit), and the commits fetched
// ahead of the one being applied are counted by it against prefetchBytes
// (commits). A file whose size at open differs from the listing is charged
// its real size then (lease.take), by the pool and the Load's budget.
func commitReadBytes(size int64) int64 {
	if size >= 0 && size <= streamCommitBytes {
		return size
	}
	return streamBufBytes
}

// readCommit reads one JSON log file (one GET) and parses it: whole into
// buf when it is at most streamCommitBytes, else streaming (parseStream).
// data is the buffer read into, for reuse (nil when streamed); nothing
// parsed refers to it.
//
// With a MemoryPool the GET charges a lease of b (see lease): what the
// listing says it will hold is reserved before the request is sent, and a
// read that needs more than the pool grants at once is sent again once
// the shortfall is reserved, so no request slot is held while waiting.
func (t *Table) readCommit(ctx context.Context, p *logPath, buf []byte, wantCommitInfo bool, b *budget) (fa *fileActions, data []byte, lerr *LogError) {
	if err := t.confine(p.Key); err != nil {
		return nil, nil, fileErr(p.Version, p.Key, 0, err)
	}
	ls := b.lease()
	defer ls.end()
	if err := ls.reserve(ctx, commitReadBytes(p.Size), "the commit", true); err != nil {
		return nil, nil, fileErr(p.Version, p.Key, 0, err)
	}
	var err, perr error
	var start time.Time
	opened := false
	for {
		start = time.Now()
		perr, opened = nil, false
		retry := false
		// One GET under the bucket's gate (in-flight limit, throttling backoff).
		err = t.gate.do(ctx, func() error {
			fa, data, perr, opened, retry = nil, nil, nil, false, false
			rd, err := t.bucket.NewReader(ctx, t.prefix+p.Key, nil)
			if err != nil {
				return err
			}
			opened = true
			size := rd.Size()
			if size >= 0 && size <= streamCommitBytes {
				if err = ls.take(size, "the commit"); err == nil {
					data, err = readSized(io.LimitReader(rd, streamCommitBytes+1), size, buf)
					if err == nil && int64(len(data)) > streamCommitBytes {
						err = reason(ErrCorrupt, "the object grew past %d bytes while read (%d when opened)", streamCommitBytes, size)
					}
					if err == nil {
						fa, perr = parseLines(data, wantCommitInfo)
					}
					ls.give(size)
				}
			} else {
				fa, err = parseStream(rd, wantCommitInfo, ls)
				var le *lineError
				if errors.As(err, &le) || errors.Is(err, ErrBudgetExceeded) {
					perr, err = err, nil
				}
			}
			if errors.Is(err, errPoolShort) {
				fa, perr, err, retry = nil, nil, nil, true
			}
			cerr := rd.Close()
			if err == nil && !retry {
				err = cerr
			}
			return err
		})
		if !retry || err != nil {
			break
		}
		// The pool could not grant the read at once: the request is
		// counted, its slot is free, and the read is sent again once
		// what it lacked is reserved.
		t.opts.observe("get", start, nil)
		short := ls.short
		ls.short = 0
		if rerr := ls.reserve(ctx, short, "the commit", false); rerr != nil {
			return nil, nil, fileErr(p.Version, p.Key, 0, rerr)
		}
	}
	if !opened {
		t.opts.observe("get", start, err)
		return nil, nil, fileErr(p.Version, p.Key, 0, classifyStoreError(err))
	}
	t.opts.observe("get", start, err)
	if err != nil {
		if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrBudgetExceeded) {
			return nil, data, fileErr(p.Version, p.Key, 0, err)
		}
		return nil, data, fileErr(p.Version, p.Key, 0, classifyStoreError(err))
	}
	if perr != nil {
		var le *lineError
		if errors.As(perr, &le) {
			return nil, data, fileErr(p.Version, p.Key, le.Line, le.Err)
		}
		return nil, data, fileErr(p.Version, p.Key, 0, perr)
	}
	return fa, data, nil
}

// parseStream is parseLines over a stream. It holds a streamBufBytes read
// buffer and, for a line longer than that, the line itself when it is an
// action deltalog keeps (charged to b; over budget is ErrBudgetExceeded)
// or nothing when it is one deltalog skips: add, remove and the other
// skipped lines are checked for balanced brackets as they pass, as
// parseLines checks them. Memory is bounded by the largest kept action,
// not by the file.
func parseStream(r io.Reader, wantCommitInfo bool, b meter) (*fileActions, error) {
	if err := b.take(streamBufBytes, "the commit read buffer"); err != nil {
		return nil, err
	}
	defer b.give(streamBufBytes)
	br := bufio.NewReaderSize(r, streamBufBytes)
	fa := &fileActions{}
	var long []byte // a long kept line being gathered
	defer func() { b.give(int64(cap(long))) }()
	for line := 1; ; line++ {
		frag, err := br.ReadSlice('\n')
		if err != nil && err != bufio.ErrBufferFull && err != io.EOF {
			return nil, err
		}
		text := frag
		if err == bufio.ErrBufferFull {
			var atEOF bool
			var lerr error
			text, atEOF, lerr = longLine(br, frag, &long, wantCommitInfo, b)
			if lerr != nil {
				if errors.Is(lerr, ErrCorrupt) {
					return nil, &lineError{Line: line, Err: lerr}
				}
				return nil, lerr
			}
			err = nil
			if atEOF {
				err = io.EOF
			}
		}
		if text = bytes.TrimSpace(text); len(text) > 0 {
			if perr := fa.addLine(text, wantCommitInfo); perr != nil {
				return nil, &lineError{Line: line, Err: fmt.Errorf("%w: %v", ErrCorrupt, perr)}
			}
		}
		if err == io.EOF {
			return fa, nil
		}
	}
}

// longLine handles a line longer than the read buffer, whose first
// streamBufBytes are first. A kept action is gathered into *long and
// returned; a skipped one is checked as it streams and nil is returned.
// atEOF: the line ended the file.
func longLine(br *bufio.Reader, first []byte, long *[]byte, wantCommitInfo bool, b meter) (text []byte, atEOF bool, err error) {
	head := bytes.TrimLeft(first, " \t\r")
	if len(head) == 0 || head[0] != '{' {
		return nil, false, reason(ErrCorrupt, "not a JSON object")
	}
	if key := firstKey(head); key != nil && skipped(key, wantCommitInfo) {
		if !objectValue(head, key) {
			return nil, false, reason(ErrCorrupt, "%s: action is not a JSON object", key)
		}
		var bc braceCheck
		bc.feed(head)
		for {
			frag, err := br.ReadSlice('\n')
			bc.feed(frag)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil && err != io.EOF {
				return nil, false, err
			}
			if !bc.balanced() {
				return nil, false, reason(ErrCorrupt, "unbalanced JSON object (truncated line?)")
			}
			return nil, err == io.EOF, nil
		}
	}
	buf := (*long)[:0]
	grow := func(frag []byte) error {
		if need := len(buf) + len(frag); need > cap(buf) {
			newCap := max(2*cap(buf), need)
			if err := b.take(int64(newCap-cap(buf)), "a long action line"); err != nil {
				return err
			}
			nb := make([]byte, len(buf), newCap)
			copy(nb, buf)
			buf = nb
		}
		buf = append(buf, frag...)
		*long = buf
		return nil
	}
	if err := grow(first); err != nil {
		return nil, false, err
	}
	for {
		frag, err := br.ReadSlice('\n')
		if gerr := grow(frag); gerr != nil {
			return nil, false, gerr
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && err != io.EOF {
			return nil, false, err
		}
		return buf, err == io.EOF, nil
	}
}

// braceCheck is balanced() fed in pieces: it tracks bracket depth outside
// strings and whether anything but whitespace follows the closing brace.
type braceCheck struct {
	depth          int
	inString, esc  bool
	closed, broken bool
}

func (c *braceCheck) feed(p []byte) {
	for _, ch := range p {
		if c.broken {
			return
		}
		if c.inString {
			switch {
			case c.esc:
				c.esc = false
			case ch == '\\':
				c.esc = true
			case ch == '"':
				c.inString = false
			}
			continue
		}
		if c.closed {
			if !isSpace(ch) {
				c.broken = true
			}
			continue
		}
		switch ch {
		case '"':
			c.inString = true
		case '{', '[':
			c.depth++
		case '}', ']':
			c.depth--
			if c.depth < 0 {
				c.broken = true
			} else if c.depth == 0 {
				c.closed = true
			}
		}
	}
}

func (c *braceCheck) balanced() bool { return c.closed && !c.broken && !c.inString }
