// Package tcpproxy is a TCP relay on loopback that a test can cut, to partition a process
// from a server without iptables: while cut, every connection through it is a black hole
// (bytes are held, nothing is refused or reset, as with a network that drops packets), and
// new connections are accepted but get no answer. Restore forwards again; connections cut
// earlier are closed then, as a peer that timed out would find them.
package tcpproxy

import (
	"net"
	"sync"
)

// Proxy relays connections from its listener to one target address.
type Proxy struct {
	target string
	ln     net.Listener

	mu    sync.Mutex
	cut   bool
	conns map[*pair]struct{}
	// resume is closed when the proxy is restored, releasing the held copies.
	resume chan struct{}
	closed bool
	wg     sync.WaitGroup
}

type pair struct {
	client, server net.Conn
	// stale is set for connections that were open while cut: they are closed on restore.
	stale bool
}

// New listens on a free loopback port and relays to target.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, conns: map[*pair]struct{}{}, resume: make(chan struct{})}
	close(p.resume)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's listening address (host:port).
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut turns the proxy into a black hole.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return
	}
	p.cut = true
	p.resume = make(chan struct{})
	for c := range p.conns {
		c.stale = true
	}
}

// Restore forwards again and closes the connections held while cut.
func (p *Proxy) Restore() {
	p.mu.Lock()
	if !p.cut {
		p.mu.Unlock()
		return
	}
	p.cut = false
	var stale []*pair
	for c := range p.conns {
		if c.stale {
			stale = append(stale, c)
		}
	}
	close(p.resume)
	p.mu.Unlock()
	for _, c := range stale {
		c.client.Close()
		c.server.Close()
	}
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	if p.cut {
		p.cut = false
		close(p.resume)
	}
	for c := range p.conns {
		c.client.Close()
		c.server.Close()
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		conn, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(conn)
	}
}

// gate blocks while the proxy is cut and reports whether the connection may go on.
func (p *Proxy) gate(c *pair) bool {
	p.mu.Lock()
	resume, stale := p.resume, c.stale
	p.mu.Unlock()
	if stale {
		<-resume
		return false
	}
	<-resume
	p.mu.Lock()
	defer p.mu.Unlock()
	return !c.stale && !p.closed
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	c := &pair{client: client}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		return
	}
	c.stale = p.cut
	p.mu.Unlock()
	if c.stale {
		// Accepted while cut: the client waits for an answer that never comes.
		p.mu.Lock()
		resume := p.resume
		p.mu.Unlock()
		<-resume
		client.Close()
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	c.server = server
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		client.Close()
		server.Close()
		return
	}
	p.conns[c] = struct{}{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); p.copy(c, server, client) }()
	go func() { defer wg.Done(); p.copy(c, client, server) }()
	wg.Wait()
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// copy relays src to dst one read at a time, holding each chunk while the proxy is cut.
func (p *Proxy) copy(c *pair, dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.gate(c) {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
