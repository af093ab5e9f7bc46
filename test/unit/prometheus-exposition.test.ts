/**
 * The tests' Prometheus exposition parser (test/helpers/prometheus.ts) accepts every sample value
 * Prometheus's own text parser accepts and refuses what it refuses: a scrape that Prometheus
 * reads must never fail a test (prom-client prints `Nan` for an event-loop gauge with no sample
 * yet), and a malformed one still must.
 */
import { parseExposition, parseSampleValue, sampleValue } from '../helpers/prometheus';

describe('sample values', () => {
  it.each([
    ['1', 1],
    ['-1.5', -1.5],
    ['+.5', 0.5],
    ['3.', 3],
    ['1e3', 1000],
    ['2.5E-3', 0.0025],
    ['+Inf', Infinity],
    ['Inf', Infinity],
    ['-Inf', -Infinity],
    ['inf', Infinity],
    ['+infinity', Infinity],
    ['-Infinity', -Infinity],
  ])('reads %s', (raw, value) => {
    expect(parseSampleValue(raw)).toBe(value);
  });

  it.each(['NaN', 'Nan', 'nan', 'NAN'])('reads %s as NaN', (raw) => {
    expect(parseSampleValue(raw)).toBeNaN();
  });

  it.each(['', 'one', '1.2.3', '.', '1e', 'e3', '+NaN', '-nan', 'Infx', 'in', '0x1p-2', '0x10', '1_000', '1e400', '1,5'])('refuses %j', (raw) => {
    expect(parseSampleValue(raw)).toBeUndefined();
  });
});

describe('a scrape', () => {
  it("accepts prom-client's Nan for a gauge with no sample yet", () => {
    const text = [
      '# HELP nodejs_eventloop_lag_mean_seconds The mean of the recorded event loop delays.',
      '# TYPE nodejs_eventloop_lag_mean_seconds gauge',
      'nodejs_eventloop_lag_mean_seconds Nan',
      '# HELP nodejs_eventloop_lag_max_seconds The maximum recorded event loop delay.',
      '# TYPE nodejs_eventloop_lag_max_seconds gauge',
      'nodejs_eventloop_lag_max_seconds 0',
      '',
    ].join('\n');
    const families = parseExposition(text);
    expect(sampleValue(families, 'nodejs_eventloop_lag_mean_seconds')).toBeNaN();
    expect(sampleValue(families, 'nodejs_eventloop_lag_max_seconds')).toBe(0);
  });

  it('reads a +Inf bucket spelled in another case', () => {
    const families = parseExposition('# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+inf"} 2\nh_sum 1.5\nh_count 2\n');
    expect(sampleValue(families, 'h_bucket', { le: '+inf' })).toBe(2);
  });

  it('still refuses a value Prometheus refuses', () => {
    expect(() => parseExposition('# TYPE g gauge\ng 0x1p-2\n')).toThrow(/bad value/);
  });
});
