// Package metrics exposes approvebot's Prometheus metrics: decisions by outcome and source,
// the pending gauge, decision latency, HTTP traffic, channel deliveries, health, refused
// attempts and skipped updates. It implements gate.Metrics and chatops.Counter.
package metrics

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/approvebot/approvebot/core/approval"
	"github.com/approvebot/approvebot/core/chatops"
	"github.com/approvebot/approvebot/core/gate"
)

// Metrics holds one registry with every approvebot metric.
type Metrics struct {
	reg        *prometheus.Registry
	decisions  *prometheus.CounterVec
	pending    prometheus.Gauge
	latency    *prometheus.HistogramVec
	httpReqs   *prometheus.CounterVec
	httpDur    *prometheus.HistogramVec
	deliveries *prometheus.CounterVec
	rateLimit  prometheus.Counter
	refused    *prometheus.CounterVec
	skipped    *prometheus.CounterVec
}

var (
	_ gate.Metrics    = (*Metrics)(nil)
	_ chatops.Counter = (*Metrics)(nil)
)

// CommitStats reports the store's group-commit counters: writes, transactions (each one
// fsync) and the seconds spent in them.
type CommitStats func() (writes, commits uint64, seconds float64)

// New builds the registry. health reports each channel's state at scrape time; commits, when
// not nil, the store's group commits.
func New(health func() map[string]gate.Health, commits CommitStats) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.decisions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "approvebot_decisions_total", Help: "Decided requests by outcome and source.",
	}, []string{"outcome", "source"})
	m.pending = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "approvebot_pending_requests", Help: "Requests waiting for a human.",
	})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "approvebot_decision_latency_seconds",
		Help:    "Time from request to decision, by source.",
		Buckets: []float64{.0005, .001, .005, .01, .05, .1, .5, 1, 5, 15, 30, 60, 120, 300},
	}, []string{"source"})
	m.httpReqs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "approvebot_http_requests_total", Help: "HTTP requests by route and status code.",
	}, []string{"route", "code"})
	m.httpDur = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "approvebot_http_request_duration_seconds", Help: "HTTP handling time by route (long-polls included).",
		Buckets: prometheus.ExponentialBuckets(0.0001, 4, 12),
	}, []string{"route"})
	m.deliveries = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "approvebot_channel_deliveries_total", Help: "Card deliveries by channel and result.",
	}, []string{"channel", "result"})
	m.rateLimit = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "approvebot_rate_limited_total", Help: "Requests answered 429 by the per-token rate limit.",
	})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "approvebot_refused_attempts_total", Help: "Refused presses, commands and signatures by channel.",
	}, []string{"channel"})
	m.skipped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "approvebot_channel_skipped_updates_total", Help: "Platform updates a channel could not decode and skipped, by channel.",
	}, []string{"channel"})
	m.reg.MustRegister(m.decisions, m.pending, m.latency, m.httpReqs, m.httpDur, m.deliveries, m.rateLimit, m.refused, m.skipped,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if health != nil {
		m.reg.MustRegister(&healthCollector{health: health, desc: prometheus.NewDesc(
			"approvebot_channel_up", "1 when the channel can deliver cards.", []string{"channel"}, nil)})
	}
	if commits != nil {
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "approvebot_store_writes_total", Help: "Store writes committed in group commits.",
			}, func() float64 { w, _, _ := commits(); return float64(w) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "approvebot_store_commits_total", Help: "Store transactions (each fsync'd); writes/commits is the grouping.",
			}, func() float64 { _, c, _ := commits(); return float64(c) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{
				Name: "approvebot_store_commit_seconds_total", Help: "Time spent writing and fsyncing group commits.",
			}, func() float64 { _, _, sec := commits(); return sec }),
		)
	}
	return m
}

// Decided implements gate.Metrics.
func (m *Metrics) Decided(outcome approval.Outcome, source approval.Source, latency time.Duration) {
	m.decisions.WithLabelValues(string(outcome), string(source)).Inc()
	m.latency.WithLabelValues(string(source)).Observe(latency.Seconds())
}

// Pending implements gate.Metrics.
func (m *Metrics) Pending(delta int) { m.pending.Add(float64(delta)) }

// Delivery implements gate.Metrics.
func (m *Metrics) Delivery(channel string, err error) {
	result := "ok"
	if err != nil {
		result = "error"
	}
	m.deliveries.WithLabelValues(channel, result).Inc()
}

// HTTP records one served request.
func (m *Metrics) HTTP(route string, code int, d time.Duration) {
	m.httpReqs.WithLabelValues(route, itoa(code)).Inc()
	m.httpDur.WithLabelValues(route).Observe(d.Seconds())
}

// RateLimited counts a 429 from the rate limiter.
func (m *Metrics) RateLimited() { m.rateLimit.Inc() }

// Refused counts a refused press, command or signature (chatops.Counter).
func (m *Metrics) Refused(channel string) { m.refused.WithLabelValues(channel).Inc() }

// Skipped counts a platform update a channel could not decode (chatops.Counter).
func (m *Metrics) Skipped(channel string) { m.skipped.WithLabelValues(channel).Inc() }

// Handler serves the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

func itoa(n int) string {
	if n >= 100 && n < 600 {
		return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
	}
	return "other"
}

type healthCollector struct {
	health func() map[string]gate.Health
	desc   *prometheus.Desc
}

func (h *healthCollector) Describe(ch chan<- *prometheus.Desc) { ch <- h.desc }

func (h *healthCollector) Collect(ch chan<- prometheus.Metric) {
	for name, st := range h.health() {
		v := 0.0
		if st.OK {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(h.desc, prometheus.GaugeValue, v, name)
	}
}

// StoreHealth is what the store reports for the metrics.
type StoreHealth struct {
	Writable    bool
	WriteErrors uint64
	Damaged     uint64
}

// Store registers the store's health: approvebot_store_writable (0 while requests that need
// a write are refused), approvebot_store_write_errors_total and
// approvebot_store_damaged_records_total, read at scrape time.
func (m *Metrics) Store(health func() StoreHealth) {
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "approvebot_store_writable", Help: "1 while the store commits writes; 0 while they fail (disk full, EPERM, read-only, EIO, the file deleted or replaced) and requests that need a write are refused with 503.",
		}, func() float64 {
			if health().Writable {
				return 1
			}
			return 0
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "approvebot_store_write_errors_total", Help: "Store commits that failed since start.",
		}, func() float64 { return float64(health().WriteErrors) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "approvebot_store_damaged_records_total", Help: "Damaged records met and quarantined since start (each record once).",
		}, func() float64 { return float64(health().Damaged) }),
	)
}

// Waiting registers approvebot_waiting_agents: agents waiting in a long-poll now.
func (m *Metrics) Waiting(n func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "approvebot_waiting_agents", Help: "Agents waiting in a long-poll for a decision now (each holds one connection).",
	}, func() float64 { return float64(n()) }))
}
