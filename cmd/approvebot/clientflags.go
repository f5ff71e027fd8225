package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
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
	// The defaults live in the help text, not in the flag: the flag package prints a
	// non-empty default once more, and an environment-derived one would be stale there.
	fs.StringVar(&f.server, "server", "", "approvebot server URL (default $"+client.EnvURL+", else "+client.DefaultURL+")")
	fs.StringVar(&f.tokenEnv, "token-env", client.EnvToken, "environment variable holding the API token")
}

// url is the server URL: -server, else $APPROVEBOT_URL, else the default.
func (f *serverFlags) url() string {
	if f.server != "" {
		return f.server
	}
	if u := os.Getenv(client.EnvURL); u != "" {
		return u
	}
	return client.DefaultURL
}

// client builds the API client; o tunes the agent-side waits.
func (f *serverFlags) client(o client.Options) (*client.Client, error) {
	token := os.Getenv(f.tokenEnv)
	if strings.TrimSpace(token) == "" {
		return nil, fmt.Errorf("no API token: environment variable %s is not set", f.tokenEnv)
	}
	return client.New(f.url(), token, o)
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
	f.unattended = envBool(envUnattended)
	fs.BoolFunc("unattended", "headless run: anything a human would have to approve is refused at once (default $"+envUnattended+")", func(v string) error {
		b, err := strconv.ParseBool(v)
		f.unattended = b
		return err
	})
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

// envUnattended marks a headless run for every agent-side tool.
const envUnattended = "APPROVEBOT_UNATTENDED"

func envBool(name string) bool {
	switch os.Getenv(name) {
	case "1", "true", "TRUE", "True", "yes", "on":
		return true
	}
	return false
}
