package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// rawConn is one agent's own HTTP/1.1 keep-alive connection, for the policy-decided
// requests that make up the throughput runs. net/http's client costs the load tool about
// as much CPU per request as the server spends (a request object, header maps, two
// goroutines per connection, a context per call), and the tool shares the server's CPUs:
// this client writes a request prepared once and reads the answer into a reused buffer,
// so more of the machine is left to the server. It speaks plain HTTP/1.1 (Content-Length
// or chunked answers, Connection: close honoured) and is used only where a request's
// bytes never change; everything else goes through net/http.
type rawConn struct {
	addr    string
	timeout time.Duration
	conn    net.Conn
	r       *bufio.Reader
	body    []byte // the last answer's body, valid until the next call
}

func newRawConn(base string, timeout time.Duration) (*rawConn, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "http" {
		return nil, fmt.Errorf("raw client: %q is not an http URL", base)
	}
	return &rawConn{addr: u.Host, timeout: timeout}, nil
}

// rawRequest is a complete HTTP/1.1 request, prepared once.
func rawRequest(host, method, path, token string, body []byte) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\n", method, path, host, token)
	if body != nil {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

func (c *rawConn) close() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// do sends req and returns the status and body. A transport error closes the connection;
// the next call dials again.
func (c *rawConn) do(req []byte) (int, []byte, error) {
	if c.conn == nil {
		conn, err := net.DialTimeout("tcp", c.addr, c.timeout)
		if err != nil {
			return 0, nil, err
		}
		c.conn = conn
		if c.r == nil {
			c.r = bufio.NewReaderSize(conn, 8<<10)
		} else {
			c.r.Reset(conn)
		}
	}
	if err := c.conn.SetDeadline(time.Now().Add(c.timeout)); err != nil {
		c.close()
		return 0, nil, err
	}
	if _, err := c.conn.Write(req); err != nil {
		c.close()
		return 0, nil, err
	}
	code, keep, err := c.readResponse()
	if err != nil {
		c.close()
		return code, nil, err
	}
	if !keep {
		c.close()
	}
	return code, c.body, nil
}

var errBadResponse = errors.New("malformed HTTP response")

func (c *rawConn) readResponse() (code int, keepAlive bool, err error) {
	line, err := c.line()
	if err != nil {
		return 0, false, err
	}
	// HTTP/1.1 200 OK
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, false, errBadResponse
	}
	code, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, errBadResponse
	}
	length, chunked, keepAlive := -1, false, true
	for {
		h, err := c.line()
		if err != nil {
			return code, false, err
		}
		if len(h) == 0 {
			break
		}
		k, v, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return code, false, errBadResponse
		}
		v = bytes.TrimSpace(v)
		switch {
		case bytes.EqualFold(k, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(v)); err != nil || length < 0 {
				return code, false, errBadResponse
			}
		case bytes.EqualFold(k, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(v, []byte("chunked"))
		case bytes.EqualFold(k, []byte("Connection")):
			keepAlive = !bytes.EqualFold(v, []byte("close"))
		}
	}
	c.body = c.body[:0]
	switch {
	case chunked:
		for {
			h, err := c.line()
			if err != nil {
				return code, false, err
			}
			size, err := strconv.ParseInt(string(bytes.TrimSpace(h)), 16, 32)
			if err != nil || size < 0 {
				return code, false, errBadResponse
			}
			if size == 0 {
				if _, err := c.line(); err != nil { // the empty trailer
					return code, false, err
				}
				return code, keepAlive, nil
			}
			if err := c.readN(int(size)); err != nil {
				return code, false, err
			}
			if l, err := c.line(); err != nil || len(l) != 0 {
				return code, false, errBadResponse
			}
		}
	case length >= 0:
		return code, keepAlive, c.readN(length)
	}
	// Neither: the body runs to the end of the connection.
	b, err := io.ReadAll(c.r)
	c.body = append(c.body, b...)
	return code, false, err
}

func (c *rawConn) readN(n int) error {
	start := len(c.body)
	c.body = slices.Grow(c.body, n)[:start+n]
	_, err := io.ReadFull(c.r, c.body[start:])
	return err
}

// line reads one CRLF-terminated line, without it.
func (c *rawConn) line() ([]byte, error) {
	l, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(l) < 2 || l[len(l)-2] != '\r' {
		return nil, errBadResponse
	}
	return l[:len(l)-2], nil
}
