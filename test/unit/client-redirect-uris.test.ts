/**
 * src/domain/sign-in/client-uris.ts: which redirect URIs a client may register
 * (docs/sign-in.md#clients), and oidc-provider's application type derived from them.
 */
import { applicationType, checkRedirectUris, redirectUriProblem } from '../../src/domain/sign-in/client-uris';

describe('redirect URIs', () => {
  it.each([
    'https://app.example.com/callback',
    'https://app.example.com:8443/cb?x=1',
    'http://127.0.0.1:3000/cb',
    'http://127.9.8.7/cb',
    'http://[::1]:8080/cb',
    'http://localhost/cb',
    'http://LOCALHOST:3000/cb',
  ])('%s is accepted for any client', (uri) => {
    expect(redirectUriProblem(uri, 'confidential')).toBeNull();
    expect(redirectUriProblem(uri, 'public')).toBeNull();
  });

  it.each([
    ['callback', 'is not an absolute URL'],
    ['/callback', 'is not an absolute URL'],
    ['https://app.example.com/cb#frag', 'has a fragment'],
    ['https://app.example.com/cb#', 'has a fragment'],
    ['http://app.example.com/cb', 'not loopback'],
    ['http://localhost.example.com/cb', 'not loopback'],
    ['http://128.0.0.1/cb', 'not loopback'],
    ['http://[::2]/cb', 'not loopback'],
    ['https://user:pw@app.example.com/cb', 'user name or password'],
    ['javascript:alert(1)', "scheme 'javascript:'"],
    ['data:text/html,hi', "scheme 'data:'"],
    ['file:///etc/passwd', "scheme 'file:'"],
    [`https://app.example.com/${'a'.repeat(2000)}`, 'longer than 2000'],
  ])('%s is refused: %s', (uri, why) => {
    expect(redirectUriProblem(uri, 'public')).toContain(why);
    expect(redirectUriProblem(uri, 'confidential')).toContain(why);
  });

  it('a private-use scheme with a dot only for public clients', () => {
    expect(redirectUriProblem('com.example.app:/callback', 'public')).toBeNull();
    expect(redirectUriProblem('com.example.app:/callback', 'confidential')).toContain('only public clients');
    expect(redirectUriProblem('myapp:/callback', 'public')).toContain("scheme 'myapp:'");
  });

  it('a list: at least `min`, at most 20, no repeats; the 400 names the index', () => {
    expect(() => checkRedirectUris('body.redirect_uris', [], 'public', 1)).toThrow('body.redirect_uris must list at least 1 URI');
    expect(checkRedirectUris('body.post_logout_redirect_uris', [], 'public', 0)).toEqual([]);
    const many = Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`);
    expect(() => checkRedirectUris('body.redirect_uris', many, 'public', 1)).toThrow('at most 20');
    expect(() => checkRedirectUris('body.redirect_uris', ['https://a.example/', 'https://a.example/'], 'public', 1)).toThrow('body.redirect_uris[1] repeats');
    expect(() => checkRedirectUris('body.redirect_uris', ['https://a.example/', 'http://a.example/'], 'public', 1)).toThrow('body.redirect_uris[1] uses http:');
  });

  it('the application type: native when a URI uses an app scheme', () => {
    expect(applicationType({ redirect_uris: ['https://a.example/cb', 'http://127.0.0.1/cb'] })).toBe('web');
    expect(applicationType({ redirect_uris: ['com.example.app:/cb'] })).toBe('native');
  });
});
