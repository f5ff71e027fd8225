package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/approvebot/approvebot/api"
	"github.com/approvebot/approvebot/config"
)

// generatedTokens is the file kept beside the database when no [[agents]] are configured.
type generatedTokens struct {
	Agent    string `json:"agent"`
	Operator string `json:"operator"`
}

// loadTokens returns the API tokens: from the environment variables [[agents]] name, or —
// with no [[agents]] — from the generated tokens file, created (mode 0600) on first start.
// Access is never anonymous.
func loadTokens(cfg *config.Config, stdout io.Writer) ([]api.Token, error) {
	if len(cfg.Agents) > 0 {
		var out []api.Token
		for i, a := range cfg.Agents {
			v := config.Secret(a.TokenEnv)
			if v == "" {
				return nil, fmt.Errorf("agents[%d] (%s): environment variable %s is not set", i, a.Name, a.TokenEnv)
			}
			if len(v) < 16 {
				return nil, fmt.Errorf("agents[%d] (%s): the token in %s is shorter than 16 characters", i, a.Name, a.TokenEnv)
			}
			out = append(out, api.Token{Name: a.Name, Role: api.Role(a.Role), Value: v})
		}
		return out, nil
	}
	path := cfg.Server.TokensFile
	t, err := readTokens(path)
	if errors.Is(err, fs.ErrNotExist) {
		t = generatedTokens{Agent: newToken("abt_agent_"), Operator: newToken("abt_op_")}
		raw, _ := json.MarshalIndent(t, "", "  ")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("creating the tokens file's directory: %w", err)
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			return nil, fmt.Errorf("creating tokens file: %w", err)
		}
		if _, err := f.Write(append(raw, '\n')); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing tokens file: %w", err)
		}
		if err := f.Close(); err != nil {
			return nil, fmt.Errorf("writing tokens file: %w", err)
		}
		printFirstStart(stdout, cfg, path, t)
	} else if err != nil {
		return nil, err
	}
	return []api.Token{
		{Name: "agent", Role: api.RoleAgent, Value: t.Agent},
		{Name: "operator", Role: api.RoleOperator, Value: t.Operator},
	}, nil
}

func readTokens(path string) (generatedTokens, error) {
	var t generatedTokens
	st, err := os.Stat(path)
	if err != nil {
		return t, err
	}
	if st.Mode().Perm()&0o077 != 0 {
		return t, fmt.Errorf("tokens file %s is readable by others (mode %v): chmod 600 it", path, st.Mode().Perm())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return t, err
	}
	if err := json.Unmarshal(raw, &t); err != nil || len(t.Agent) < 16 || len(t.Operator) < 16 {
		return t, fmt.Errorf("tokens file %s is damaged: delete it to generate new tokens", path)
	}
	return t, nil
}

// tokenBytes is the randomness of every token approvebot makes (256 bits; the server
// accepts tokens of 16 characters and more).
const tokenBytes = 32

// newToken is prefix and tokenBytes random bytes, base64url without padding.
func newToken(prefix string) string {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// cmdToken prints a new random token, for the variable an [[agents]] entry's token_env
// names: `export APPROVEBOT_TOKEN=$(approvebot token)`.
func cmdToken(_ context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("token", "token", stderr)
	if err := fs.Parse(args); err != nil {
		return parseError(err, exitUsage)
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return &exitError{code: exitUsage, msg: "token takes no arguments"}
	}
	_, err := fmt.Fprintln(stdout, newToken("abt_"))
	return err
}

func printFirstStart(w io.Writer, cfg *config.Config, path string, t generatedTokens) {
	url := "http://" + cfg.Server.Listen
	fmt.Fprintf(w, `approvebot: first start without [[agents]] in a config: generated two tokens,
kept in %s (readable only by you).

  agent token:    %s
  operator token: %s

Try it (the agent side — ask, exec, hook, mcp — reads APPROVEBOT_URL and APPROVEBOT_TOKEN):
  export APPROVEBOT_URL=%s
  export APPROVEBOT_TOKEN=%s
  export APPROVEBOT_OPERATOR_TOKEN=%s
  curl -s -H "Authorization: Bearer $APPROVEBOT_TOKEN" $APPROVEBOT_URL/v1/requests \
       -d '{"tool":"bash","args":{"command":"rm -rf ./build"},"session":"demo"}'
  approvebot pending -token-env APPROVEBOT_OPERATOR_TOKEN

`, path, t.Agent, t.Operator, url, t.Agent, t.Operator)
}
