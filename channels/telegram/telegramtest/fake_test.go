package telegramtest

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const token = "42:fake-test-token"

// call posts one method as multipart/form-data, as go-telegram/bot does.
func call(t *testing.T, s *Server, method string, params map[string]string) (int, map[string]any) {
	t.Helper()
	code, out, err := callCtx(context.Background(), s, method, params)
	if err != nil {
		t.Fatal(err)
	}
	return code, out
}

func callCtx(ctx context.Context, s *Server, method string, params map[string]string) (int, map[string]any, error) {
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for k, v := range params {
		w.WriteField(k, v)
	}
	w.Close()
	req, _ := http.NewRequestWithContext(ctx, "POST", s.URL+"/bot"+token+"/"+method, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

func start(t *testing.T) *Server {
	s := Start(t, Options{Token: token})
	s.AddChat(Chat{ID: -100, Type: "supergroup"})
	return s
}

func TestLimitsAndErrors(t *testing.T) {
	s := start(t)
	kb := func(data string) string {
		return `{"inline_keyboard":[[{"text":"ok","callback_data":"` + data + `"}]]}`
	}
	cases := []struct {
		name   string
		method string
		params map[string]string
		code   int
		desc   string
	}{
		{"4096 characters", "sendMessage", map[string]string{"chat_id": "-100", "text": strings.Repeat("é", 4096)}, 200, ""},
		{"4097 characters", "sendMessage", map[string]string{"chat_id": "-100", "text": strings.Repeat("a", 4097)}, 400, ErrTextTooLong},
		{"limit counts after HTML parsing", "sendMessage", map[string]string{"chat_id": "-100", "parse_mode": "HTML", "text": "<b>" + strings.Repeat("&lt;", 4096) + "</b>"}, 200, ""},
		{"emoji count twice", "sendMessage", map[string]string{"chat_id": "-100", "text": strings.Repeat("🔐", 2049)}, 400, ErrTextTooLong},
		{"empty text", "sendMessage", map[string]string{"chat_id": "-100", "text": " "}, 400, ErrTextEmpty},
		{"unknown chat", "sendMessage", map[string]string{"chat_id": "-5", "text": "x"}, 400, ErrChatNotFound},
		{"bad HTML tag", "sendMessage", map[string]string{"chat_id": "-100", "parse_mode": "HTML", "text": "<script>x</script>"}, 400, "Unsupported start tag"},
		{"unclosed HTML", "sendMessage", map[string]string{"chat_id": "-100", "parse_mode": "HTML", "text": "<b>x"}, 400, "Can't find end tag"},
		{"bare <", "sendMessage", map[string]string{"chat_id": "-100", "parse_mode": "HTML", "text": "a < b"}, 400, "can't parse entities"},
		{"64-byte callback data", "sendMessage", map[string]string{"chat_id": "-100", "text": "x", "reply_markup": kb(strings.Repeat("d", 64))}, 200, ""},
		{"65-byte callback data", "sendMessage", map[string]string{"chat_id": "-100", "text": "x", "reply_markup": kb(strings.Repeat("d", 65))}, 400, ErrButtonData},
		{"reply to unknown message", "sendMessage", map[string]string{"chat_id": "-100", "text": "x", "reply_parameters": `{"message_id":999}`}, 400, ErrReplyNotFound},
		{"edit unknown message", "editMessageText", map[string]string{"chat_id": "-100", "message_id": "999", "text": "x"}, 400, ErrMessageNotFound},
		{"unknown callback query", "answerCallbackQuery", map[string]string{"callback_query_id": "nope"}, 400, ErrQueryInvalid},
		{"unknown method", "sendRocket", map[string]string{}, 404, "Not Found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out := call(t, s, tc.method, tc.params)
			if code != tc.code {
				t.Fatalf("status %d, want %d (%v)", code, tc.code, out)
			}
			if tc.desc != "" && !strings.Contains(out["description"].(string), tc.desc) {
				t.Fatalf("description %q, want %q", out["description"], tc.desc)
			}
		})
	}
}

func TestWrongTokenIs401(t *testing.T) {
	s := start(t)
	resp, err := http.Post(s.URL+"/bot1:wrong/getMe", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 401 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestEditNotModified(t *testing.T) {
	s := start(t)
	_, out := call(t, s, "sendMessage", map[string]string{"chat_id": "-100", "text": "<b>hi</b>", "parse_mode": "HTML",
		"reply_markup": `{"inline_keyboard":[[{"text":"ok","callback_data":"x"}]]}`})
	id := int(out["result"].(map[string]any)["message_id"].(float64))
	edit := map[string]string{"chat_id": "-100", "message_id": itoa(id), "text": "<b>hi</b>", "parse_mode": "HTML",
		"reply_markup": `{"inline_keyboard":[[{"text":"ok","callback_data":"x"}]]}`}
	if code, out := call(t, s, "editMessageText", edit); code != 400 || out["description"] != ErrNotModified {
		t.Fatalf("identical edit: %d %v", code, out)
	}
	edit["reply_markup"] = `{"inline_keyboard":[]}`
	if code, _ := call(t, s, "editMessageText", edit); code != 200 {
		t.Fatalf("removing the keyboard: %d", code)
	}
	m, _ := s.Message(-100, id)
	if m.HasButtons() || m.Edits != 1 {
		t.Fatalf("message %+v", m)
	}
	if code, out := call(t, s, "editMessageText", edit); code != 400 || out["description"] != ErrNotModified {
		t.Fatalf("second identical edit: %d %v", code, out)
	}
}

func TestGetUpdatesLongPolls(t *testing.T) {
	s := start(t)
	// Empty: held for the timeout, not answered at once.
	t0 := time.Now()
	code, out := call(t, s, "getUpdates", map[string]string{"timeout": "1"})
	if code != 200 || time.Since(t0) < 900*time.Millisecond || len(out["result"].([]any)) != 0 {
		t.Fatalf("empty poll: %d after %s: %v", code, time.Since(t0), out)
	}
	// An update pushed during a held poll ends it at once.
	go func() {
		time.Sleep(200 * time.Millisecond)
		s.Press(-100, 7, User{ID: 5, FirstName: "A"}, "data")
	}()
	t0 = time.Now()
	_, out = call(t, s, "getUpdates", map[string]string{"timeout": "10"})
	if time.Since(t0) > 5*time.Second {
		t.Fatalf("poll not released by an update")
	}
	ups := out["result"].([]any)
	if len(ups) != 1 {
		t.Fatalf("updates %v", ups)
	}
	u := ups[0].(map[string]any)
	id := int64(u["update_id"].(float64))
	msg := u["callback_query"].(map[string]any)["message"].(map[string]any)
	if msg["date"].(float64) != 0 {
		t.Fatalf("a message the fake does not have should be inaccessible (date 0): %v", msg)
	}
	// Not confirmed yet: delivered again; offset confirms.
	if _, out := call(t, s, "getUpdates", map[string]string{}); len(out["result"].([]any)) != 1 {
		t.Fatalf("unconfirmed update not redelivered: %v", out)
	}
	if _, out := call(t, s, "getUpdates", map[string]string{"offset": itoa(int(id + 1))}); len(out["result"].([]any)) != 0 {
		t.Fatalf("confirmed update redelivered: %v", out)
	}
	// Messages the bot sent carry a date in updates.
	_, sent := call(t, s, "sendMessage", map[string]string{"chat_id": "-100", "text": "card"})
	mid := int(sent["result"].(map[string]any)["message_id"].(float64))
	s.Press(-100, mid, User{ID: 5, FirstName: "A"}, "d")
	_, out = call(t, s, "getUpdates", map[string]string{"offset": itoa(int(id + 1))})
	m := out["result"].([]any)[0].(map[string]any)["callback_query"].(map[string]any)["message"].(map[string]any)
	if m["date"].(float64) == 0 || m["text"] != "card" {
		t.Fatalf("message in update: %v", m)
	}
}

func TestSecondPollerConflicts(t *testing.T) {
	s := start(t)
	var wg sync.WaitGroup
	wg.Add(1)
	var first int
	go func() {
		defer wg.Done()
		first, _, _ = callCtx(context.Background(), s, "getUpdates", map[string]string{"timeout": "5"})
	}()
	s.WaitFor(t, 2*time.Second, "first poll", s.Polling)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	go callCtx(ctx, s, "getUpdates", map[string]string{"timeout": "5"})
	wg.Wait()
	if first != 409 {
		t.Fatalf("first poller: %d, want 409", first)
	}
}

func TestFaults(t *testing.T) {
	s := start(t)
	s.Inject(Fault{Code: 429, RetryAfter: 3, Times: 2})
	for i := 0; i < 2; i++ {
		code, out := call(t, s, "sendMessage", map[string]string{"chat_id": "-100", "text": "x"})
		if code != 429 || out["parameters"].(map[string]any)["retry_after"].(float64) != 3 {
			t.Fatalf("%d %v", code, out)
		}
	}
	if code, _ := call(t, s, "sendMessage", map[string]string{"chat_id": "-100", "text": "x"}); code != 200 {
		t.Fatalf("fault outlived its Times: %d", code)
	}
}

func TestAnswerOnce(t *testing.T) {
	s := start(t)
	qid := s.Press(-100, 1, User{ID: 5}, "d")
	if code, _ := call(t, s, "answerCallbackQuery", map[string]string{"callback_query_id": qid, "text": strings.Repeat("x", 201)}); code != 400 {
		t.Fatalf("201-character answer: %d", code)
	}
	if code, _ := call(t, s, "answerCallbackQuery", map[string]string{"callback_query_id": qid, "text": "ok", "show_alert": "true"}); code != 200 {
		t.Fatalf("answer: %d", code)
	}
	if code, _ := call(t, s, "answerCallbackQuery", map[string]string{"callback_query_id": qid}); code != 400 {
		t.Fatalf("second answer: %d", code)
	}
	if a, ok := s.AnswerTo(qid); !ok || !a.ShowAlert || a.Text != "ok" || len(s.Unanswered()) != 0 {
		t.Fatalf("answer %+v", a)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
