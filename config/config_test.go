package config

import (
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/approvebot/approvebot"
)

func TestExampleConfigWorksAsShipped(t *testing.T) {
	c, err := Parse(approvebot.ExampleConfig, "config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.ApprovalTimeout.Seconds() != 120 || c.Policy.ExecTier != "auto" || len(c.Agents) != 2 {
		t.Fatalf("unexpected example values: %+v", c)
	}
}

func TestEmptyConfigDefaults(t *testing.T) {
	c, err := Parse(nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Server.Listen != DefaultListen || c.Server.Data != DefaultData || c.Server.MaxBody != 1<<20 {
		t.Fatalf("%+v", c.Server)
	}
	if c.Policy.Exec.Security != "allowlist" || c.Policy.Exec.Ask != "on-miss" || c.Policy.AskFallback != "deny" {
		t.Fatalf("%+v", c.Policy)
	}
}

func TestStrictErrorsNameKeyAndLine(t *testing.T) {
	cases := []struct {
		name, doc string
		want      []string
	}{
		{"unknown key", "[server]\nlisten = \"127.0.0.1:1\"\nlisen = \"x\"\n", []string{"f.toml:3", `unknown key "server.lisen"`}},
		{"unknown table", "[polcy]\nexec_tier = \"ask\"\n", []string{"f.toml:", "polcy"}},
		{"bad duration", "[server]\n\napproval_timeout = \"soon\"\n", []string{"f.toml:3", "approval_timeout"}},
		{"wrong type", "[server]\nmax_body = \"big\"\n", []string{"f.toml:2", "max_body"}},
		{"bad tier", "[policy]\nexec_tier = \"yolo\"\n", []string{"policy.exec_tier", "yolo"}},
		{"bad role", "[[agents]]\nname = \"a\"\ntoken_env = \"A\"\nrole = \"root\"\n", []string{"agents[0].role", "root"}},
		{"bad permission", "[policy.tool_permissions]\nBash = \"sure\"\n", []string{"tool_permissions", "Bash", "sure"}},
		{"syntax", "[server\n", []string{"f.toml:1"}},
		{"telegram without approvers", "[channels.telegram]\nchats = [1]\n", []string{"channels.telegram.approvers"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.doc), "f.toml")
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestDefaultsFromEnvironment(t *testing.T) {
	t.Setenv(EnvTelegramToken, "123:abc")
	t.Setenv(EnvTelegramChats, "-100, 42")
	t.Setenv(EnvTelegramApprovers, "7")
	c, err := Defaults()
	if err != nil {
		t.Fatal(err)
	}
	if c.Channels.Telegram == nil || len(c.Channels.Telegram.Chats) != 2 || c.Channels.Telegram.Approvers[0] != 7 {
		t.Fatalf("%+v", c.Channels.Telegram)
	}
	if c.Channels.Slack != nil || c.Channels.Discord != nil {
		t.Fatal("channels without tokens were enabled")
	}
	t.Setenv(EnvTelegramApprovers, "")
	if _, err := Defaults(); err == nil {
		t.Fatal("a telegram channel without approvers was accepted")
	}
}

// TestExampleDocumentsEveryKey walks every TOML key of the config structs and requires the
// example file to mention it (set or commented out).
func TestExampleDocumentsEveryKey(t *testing.T) {
	example := string(approvebot.ExampleConfig)
	var walk func(prefix string, typ reflect.Type)
	walk = func(prefix string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
			typ = typ.Elem()
		}
		if typ.Kind() != reflect.Struct || typ == reflect.TypeOf(Duration{}) {
			return
		}
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			key := strings.Split(f.Tag.Get("toml"), ",")[0]
			if key == "" || key == "-" {
				continue
			}
			if !regexp.MustCompile(`(?m)^#?\s*\[*`+regexp.QuoteMeta(key)+`\b`).MatchString(example) &&
				!strings.Contains(example, "["+prefix+key+"]") && !strings.Contains(example, "[["+prefix+key+"]]") {
				t.Errorf("config.example.toml does not document %s%s", prefix, key)
			}
			walk(prefix+key+".", f.Type)
		}
	}
	walk("", reflect.TypeOf(Config{}))
}

// A key the file sets is what it says, even zero; a key it leaves out keeps its default.
func TestExplicitValuesAndLimits(t *testing.T) {
	cases := []struct {
		name, doc string
		check     func(*Config) bool
		err       string
	}{
		{"rate_limit 0 disables limiting", "[server]\nrate_limit = 0\n", func(c *Config) bool {
			return c.Server.RateLimit == 0 && c.Server.RateBurst == DefaultRateBurst && c.Server.MaxPending == DefaultMaxPending
		}, ""},
		{"left out keeps the default", "[server]\nlisten = \"127.0.0.1:9\"\n", func(c *Config) bool {
			return c.Server.RateLimit == DefaultRateLimit && c.Server.ApprovalTimeout.Duration == DefaultApprovalTimeout
		}, ""},
		{"burst 0 with limiting off", "[server]\nrate_limit = 0\nrate_burst = 0\n", func(c *Config) bool { return c.Server.RateLimit == 0 }, ""},
		{"burst 0 while limiting", "[server]\nrate_burst = 0\n", nil, "server.rate_burst: must be at least 1"},
		{"negative rate", "[server]\nrate_limit = -1\n", nil, "server.rate_limit: must not be negative"},
		{"max_pending 0", "[server]\nmax_pending = 0\n", nil, "server.max_pending: must be at least 1"},
		{"max_pending_per_session 0", "[server]\nmax_pending_per_session = 0\n", nil, "server.max_pending_per_session: must be at least 1"},
		{"approval_timeout 0", "[server]\napproval_timeout = \"0s\"\n", nil, "server.approval_timeout: must be at least 1s"},
		{"max_body below the floor", "[server]\nmax_body = 1023\n", nil, "server.max_body: must be at least 1024"},
		{"delivery_timeout 0", "[server]\ndelivery_timeout = \"0s\"\n", nil, "server.delivery_timeout: must be positive"},
		{"max_wait 0", "[server]\nmax_wait = \"0s\"\n", nil, "server.max_wait: must be positive"},
		{"audit_max_entries negative", "[server]\naudit_max_entries = -1\n", nil, "server.audit_max_entries"},
		{"slack route to a channel name", "[[routes]]\nchannel = \"slack\"\nchats = [\"#ops\"]\n", nil, "routes[0].chats"},
		{"channel defaults fill a section", "[channels.discord]\napprovers = [\"1\"]\n", func(c *Config) bool {
			d := c.Channels.Discord
			return d.Mode == "gateway" && d.DenyReasonWindow.Duration == 60*time.Second && *d.MessageContent
		}, ""},
		{"channel errors name the key", "[channels.slack]\napprovers = [\"alice\"]\n", nil, "channels.slack.approvers"},
		{"telegram poll_timeout floor", "[channels.telegram]\napprovers = [1]\npoll_timeout = \"1s\"\n", nil, "channels.telegram.poll_timeout: must be at least 2s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Parse([]byte(c.doc), "f.toml")
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(got) {
				t.Fatalf("parsed %+v", got.Server)
			}
		})
	}
}

func TestMaxPendingPerAgentDefaultsToHalf(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      int
	}{
		{"default", "", 25000},
		{"half of max_pending", "[server]\nmax_pending = 10\n", 5},
		{"set", "[server]\nmax_pending = 10\nmax_pending_per_agent = 9\n", 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse([]byte(tc.doc), "f.toml")
			if err != nil {
				t.Fatal(err)
			}
			if c.Server.MaxPendingPerAgent != tc.want {
				t.Fatalf("max_pending_per_agent = %d, want %d", c.Server.MaxPendingPerAgent, tc.want)
			}
		})
	}
	if _, err := Parse([]byte("[server]\nmax_pending_per_agent = -1\n"), "f.toml"); err == nil || !strings.Contains(err.Error(), "max_pending_per_agent") {
		t.Fatalf("negative cap: %v", err)
	}
}
