package main

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/approvebot/approvebot/client"
)

// serverFlags are the flags every subcommand that talks to a running server shares.
type serverFlags struct {
	server   string
	tokenEnv string
}

func (f *serverFlags) register(fs *flag.FlagSet) {
	def := os.Getenv(client.EnvURL)
	if def == "" {
		def = client.DefaultURL
	}
	fs.StringVar(&f.server, "server", def, "approvebot server URL (default $"+client.EnvURL+", else "+client.DefaultURL+")")
	fs.StringVar(&f.tokenEnv, "token-env", client.EnvToken, "environment variable holding the API token")
}

// client builds the API client; o tunes the agent-side waits.
func (f *serverFlags) client(o client.Options) (*client.Client, error) {
	token := os.Getenv(f.tokenEnv)
	if strings.TrimSpace(token) == "" {
		return nil, fmt.Errorf("no API token: environment variable %s is not set", f.tokenEnv)
	}
	return client.New(f.server, token, o)
}

// agentFlags are the flags of the agent-side commands (ask, exec, hook, mcp).
type agentFlags struct {
	serverFlags
	session        string
	unattended     bool
	tier           string
	timeout        time.Duration
	connectTimeout time.Duration

	once sync.Once
	c    *client.Client
	cerr error
}

func (f *agentFlags) register(fs *flag.FlagSet, sessionHelp string) {
	f.serverFlags.register(fs)
	fs.StringVar(&f.session, "session", "", sessionHelp)
	fs.BoolVar(&f.unattended, "unattended", envBool("APPROVEBOT_UNATTENDED"),
		"headless run: anything a human would have to approve is refused at once (default $APPROVEBOT_UNATTENDED)")
	fs.StringVar(&f.tier, "tier", "", "exec tier for this call: ask|auto|full (can only tighten the server's)")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up (refuse) after this long; 0 follows the request's approval timeout")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", 5*time.Second, "how long to retry while the server refuses connections")
}

// getClient builds the client once (the MCP server reuses it across calls).
func (f *agentFlags) getClient() (*client.Client, error) {
	f.once.Do(func() {
		f.c, f.cerr = f.client(client.Options{CreateRetry: f.connectTimeout, UserAgent: "approvebot-cli"})
	})
	return f.c, f.cerr
}

func envBool(name string) bool {
	switch os.Getenv(name) {
	case "1", "true", "TRUE", "True", "yes", "on":
		return true
	}
	return false
}
