"""bridge/mcp/options.py: Playwright MCP's options from flags, environment and config file
(parsing, precedence flag > env > config > default, errors), and the command line of the
embedded launch they produce. No browser is started."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from trustbridge.bridge import cli
from trustbridge.bridge.embedded import Embedded
from trustbridge.bridge.mcp.options import McpOptions, OptionsError, build_options, parse_viewport
from trustbridge.supervisor.origins import OriginPolicy, parse_origin_list, parse_origin_pattern

REPO = Path(__file__).resolve().parents[2]


def _flags(argv: list[str]) -> dict:
    args = cli.build_parser().parse_args(["mcp", *argv])
    return {k: getattr(args, k) for k in cli.MCP_OPTION_FLAGS}


def _config(tmp_path: Path, data: object) -> Path:
    path = tmp_path / "pw.json"
    path.write_text(json.dumps(data))
    return path


def test_defaults_are_todays_embedded_launch() -> None:
    """No flag, no environment, no file: headless Chromium, 1280x720, fresh profile, no caps."""
    opts = build_options(_flags([]), {})
    assert opts == McpOptions()
    assert opts.launch_set == frozenset() and opts.warnings == ()
    kw = opts.embedded_kwargs()
    assert (kw["browser"], kw["device"], kw["headless"], kw["viewport"], kw["user_data_dir"]) \
        == ("chromium", "chromium", True, None, None)
    assert not kw["origins"].active


def test_every_flag_parses(tmp_path: Path) -> None:
    """Each Playwright MCP flag lands in its field, in the field's type."""
    exe = Path(sys.executable).resolve()
    opts = build_options(_flags([
        "--browser", "Firefox", "--headed", "--viewport-size", "800x600",
        "--user-data-dir", str(tmp_path / "p"), "--output-dir", str(tmp_path / "out"),
        "--allowed-origins", "https://a.test;http://localhost:*",
        "--blocked-origins", "evil.test", "--caps", "vision, pdf",
        "--executable-path", str(exe)]), {})
    assert opts.browser == "firefox" and opts.headless is False
    assert opts.viewport == (800, 600)
    assert opts.user_data_dir == tmp_path / "p" and opts.output_dir == tmp_path / "out"
    assert opts.allowed_origins == ("https://a.test", "http://localhost:*")
    assert opts.blocked_origins == ("evil.test",)
    assert opts.caps == {"vision", "pdf"} and opts.executable_path == exe
    assert "caps" not in opts.launch_set and "viewport" in opts.launch_set


def test_precedence_flag_over_env_over_config(tmp_path: Path) -> None:
    """flag > TRUSTBRIDGE_* > PLAYWRIGHT_MCP_* > --config > default, option by option."""
    config = _config(tmp_path, {
        "browser": {"browserName": "firefox", "launchOptions": {"headless": False},
                    "contextOptions": {"viewport": {"width": 640, "height": 480}}},
        "capabilities": ["pdf"], "network": {"blockedOrigins": ["https://cfg.test"]}})
    env = {"PLAYWRIGHT_MCP_VIEWPORT_SIZE": "1024x768", "TRUSTBRIDGE_VIEWPORT_SIZE": "900x700",
           "PLAYWRIGHT_MCP_CAPS": "vision"}
    opts = build_options(_flags(["--config", str(config), "--viewport-size", "800x600"]), env)
    assert opts.viewport == (800, 600)  # flag
    assert opts.caps == {"vision"}  # env over config
    assert opts.browser == "firefox" and opts.headless is False  # config
    assert opts.blocked_origins == ("https://cfg.test",)
    assert build_options(_flags(["--config", str(config)]), env).viewport == (900, 700)
    assert build_options(_flags(["--config", str(config)]), {}).viewport == (640, 480)
    assert build_options({}, {"PLAYWRIGHT_MCP_CONFIG": str(config)}).browser == "firefox"


def test_env_booleans_and_lists() -> None:
    """Env booleans are true/false/1/0; lists are semicolon (origins) or comma (caps)."""
    opts = build_options({}, {"PLAYWRIGHT_MCP_HEADLESS": "false", "PLAYWRIGHT_MCP_ISOLATED": "1",
                              "PLAYWRIGHT_MCP_ALLOWED_ORIGINS": "a.test; b.test",
                              "PLAYWRIGHT_MCP_CAPS": "pdf"})
    assert (opts.headless, opts.isolated, opts.allowed_origins, opts.caps) \
        == (False, True, ("a.test", "b.test"), {"pdf"})
    with pytest.raises(OptionsError, match="PLAYWRIGHT_MCP_HEADLESS='yes please'.*boolean"):
        build_options({}, {"PLAYWRIGHT_MCP_HEADLESS": "yes please"})


@pytest.mark.parametrize(("flags", "env", "message"), [
    (["--browser", "webkit"], {}, "--browser: unknown browser 'webkit'.*WebKit"),
    (["--browser", "chrome"], {}, "chromium.*--executable-path"),
    (["--viewport-size", "800"], {}, "--viewport-size: '800' is not a viewport size"),
    (["--viewport-size", "0x600"], {}, "not a viewport size"),
    (["--viewport-size", "20000x600"], {}, "not a viewport size"),
    (["--caps", "vision,telepathy"], {}, "--caps: unknown capability 'telepathy'"),
    (["--blocked-origins", "ftp://x.test"], {}, "--blocked-origins: 'ftp://x.test' is not an origin"),
    (["--allowed-origins", "https://a.test/path"], {}, "is not an origin"),
    (["--executable-path", "/nonexistent/browser"], {}, "--executable-path: .*not an executable"),
    (["--isolated", "--user-data-dir", "/tmp/p"], {}, "give one of them"),
    ([], {"TRUSTBRIDGE_BROWSER": "netscape"}, "TRUSTBRIDGE_BROWSER='netscape'"),
])
def test_bad_values_are_refused_naming_their_source(flags: list[str], env: dict,
                                                    message: str) -> None:
    """A bad value raises OptionsError naming the flag or variable and what is accepted."""
    with pytest.raises(OptionsError, match=message):
        build_options(_flags(flags), env)


def test_config_file_errors_and_ignored_keys(tmp_path: Path) -> None:
    """A missing, non-JSON or non-object file is refused; keys with no equivalent are
    reported as ignored; a bad mapped value names its key path."""
    with pytest.raises(OptionsError, match="cannot read"):
        build_options({"config": str(tmp_path / "missing.json")}, {})
    (tmp_path / "bad.json").write_text("{nope")
    with pytest.raises(OptionsError, match="not JSON"):
        build_options({"config": str(tmp_path / "bad.json")}, {})
    with pytest.raises(OptionsError, match="JSON object"):
        build_options({"config": str(_config(tmp_path, [1, 2]))}, {})
    with pytest.raises(OptionsError, match="browser.contextOptions.viewport"):
        build_options({"config": str(_config(tmp_path, {
            "browser": {"contextOptions": {"viewport": {"width": "wide", "height": 5}}}}))}, {})
    opts = build_options({"config": str(_config(tmp_path, {
        "server": {"port": 1}, "browser": {"launchOptions": {"channel": "chrome"}},
        "outputDir": str(tmp_path / "o")}))}, {})
    assert opts.output_dir == tmp_path / "o"
    assert "server, browser.launchOptions.channel ignored" in opts.warnings[0]


def test_isolated_and_user_data_dir_from_different_sources(tmp_path: Path) -> None:
    """--isolated from a higher source than the profile wins (and the reverse), said in a
    warning; from the same source they are refused."""
    config = _config(tmp_path, {"browser": {"userDataDir": str(tmp_path / "p")}})
    opts = build_options({"config": str(config), "isolated": True}, {})
    assert opts.isolated and opts.user_data_dir is None
    assert any("--user-data-dir ignored" in w for w in opts.warnings)
    opts = build_options({"user_data_dir": str(tmp_path / "q")}, {"PLAYWRIGHT_MCP_ISOLATED": "1"})
    assert opts.user_data_dir == tmp_path / "q" and not opts.isolated


def test_playwright_only_caps_are_accepted_and_ignored() -> None:
    """Playwright MCP's other capabilities (storage, tracing...) start the server with a
    warning; only ours (vision, devtools) remain."""
    opts = build_options({"caps": "vision,devtools,storage,tracing"}, {})
    assert opts.caps == {"vision", "devtools"}
    assert "storage, tracing" in opts.warnings[0]


def test_viewport_forms() -> None:
    """WxH, the legacy W,H, a {width, height} object; null keeps the default."""
    assert parse_viewport("1280x720") == parse_viewport("1280,720") == (1280, 720)
    assert parse_viewport({"width": 10, "height": 20}) == (10, 20)
    assert parse_viewport(None) is None
    with pytest.raises(ValueError):
        parse_viewport({"width": 10, "height": 20, "depth": 3})


def test_origin_policy_matches_playwright_mcps_rule() -> None:
    """The block list first; with an allow list only what it names; full origins with
    default ports, wildcard ports, bare hosts over http and https, and *."""
    policy = OriginPolicy(parse_origin_list("https://ok.test;http://localhost:*"),
                          parse_origin_list("http://localhost:9999"))
    assert policy.refusal("https://ok.test/x") is None
    assert policy.refusal("https://ok.test:443/x") is None
    assert "not in --allowed-origins" in policy.refusal("https://ok.test:8443/")
    assert policy.refusal("http://localhost:1234/a") is None
    assert "--blocked-origins (http://localhost:9999)" in policy.refusal("http://localhost:9999/")
    assert "not in --allowed-origins" in policy.refusal("http://other.test/")
    assert policy.refusal("data:text/html,hi") is None  # not a network request
    assert policy.refusal("chrome-extension://abc/page.html") is None
    bare = OriginPolicy(blocked=parse_origin_list(["evil.test"]))
    assert bare.refusal("http://evil.test:81/") and bare.refusal("https://EVIL.test/")
    assert bare.refusal("https://good.test/") is None
    assert OriginPolicy(blocked=(parse_origin_pattern("*"),)).refusal("https://a.b/")
    assert not OriginPolicy().active and bare.active


def test_embedded_passes_the_options_to_the_supervisor(tmp_path: Path) -> None:
    """The supervisor's command line carries every launch option, and it accepts it."""
    opts = build_options(_flags([
        "--browser", "firefox", "--headed", "--viewport-size", "800x600",
        "--user-data-dir", str(tmp_path / "p"), "--output-dir", str(tmp_path / "o"),
        "--allowed-origins", "http://127.0.0.1:*", "--blocked-origins", "evil.test",
        "--executable-path", sys.executable]), {})
    emb = Embedded(port=0, **opts.embedded_kwargs())
    args = emb.supervisor_args()
    i = args.index("-m")
    tail = args[i + 2:]
    assert tail[tail.index("--device") + 1] == "firefox"
    assert tail[tail.index("--browser") + 1] == "firefox" and "--headed" in tail
    assert tail[tail.index("--viewport") + 1] == "800x600"
    assert tail[tail.index("--user-data-dir") + 1] == str(tmp_path / "p")
    assert tail[tail.index("--output-dir") + 1] == str(tmp_path / "o")
    assert tail[tail.index("--allowed-origins") + 1] == "http://127.0.0.1:*"
    assert tail[tail.index("--blocked-origins") + 1] == "evil.test"
    assert tail[tail.index("--executable-path") + 1] == str(Path(sys.executable).resolve())
    from trustbridge.supervisor.__main__ import main as supervisor_main
    with pytest.raises(SystemExit) as exc:  # parses, then --help stops before any launch
        supervisor_main([*tail, "--help"])
    assert exc.value.code == 0


def test_cli_exits_2_before_anything_starts(tmp_path: Path) -> None:
    """``trustbridge mcp`` with a bad option prints the reason and exits 2 at once: no
    bridge listening, nothing on stdout."""
    proc = subprocess.run(
        [sys.executable, "-m", "trustbridge", "mcp", "--viewport-size", "big"],
        capture_output=True, text=True, timeout=60, cwd=str(REPO),
        env={"PATH": "/usr/bin:/bin", "TRUSTBRIDGE_HOME": str(tmp_path)})
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert "--viewport-size: 'big' is not a viewport size" in proc.stderr
    assert "bridge listening" not in proc.stderr and not (tmp_path / "endpoint.json").exists()


def test_harmless_playwright_flags_are_taken_with_one_warning_each(
        capsys: pytest.CaptureFixture[str]) -> None:
    """--no-sandbox, --timeout-action N, --save-session, --image-responses omit: started
    with one stderr line each naming the flag and what ignoring it means."""
    args = cli.build_parser().parse_args([
        "mcp", "--no-sandbox", "--timeout-action", "5000", "--save-session",
        "--image-responses", "omit", "--allowed-hosts", "a", "b", "--no-embedded"])
    cli.mcp_options(args, env={})
    err = capsys.readouterr().err.splitlines()
    for flag in ("--no-sandbox", "--timeout-action", "--save-session", "--image-responses",
                 "--allowed-hosts"):
        (line,) = [e for e in err if f"warning: {flag} (Playwright MCP) ignored: " in e]
        assert line.split("ignored: ")[1], line


@pytest.mark.parametrize("argv, reason", [
    (["--device", "iPhone 15"], "no device emulation"),
    (["--proxy-server", "http://p:3128"], "traffic would go direct"),
    (["--secrets", "s.env"], "secrets are not masked"),
    (["--ignore-https-errors"], "certificate errors stay errors"),
    (["--cdp-endpoint", "http://127.0.0.1:9222"], "--bridge"),
    (["--storage-state", "s.json"], "signed-out"),
])
def test_flags_that_would_change_results_or_security_are_refused_with_why(
        argv: list[str], reason: str) -> None:
    """Refused, not ignored: the message names the flag and why."""
    args = cli.build_parser().parse_args(["mcp", *argv])
    with pytest.raises(cli._Refused) as info:
        cli.mcp_options(args, env={})
    assert f"{argv[0]} (Playwright MCP) is not supported" in str(info.value)
    assert reason in str(info.value)


def test_port_is_http_and_host_is_loopback_only() -> None:
    """--port N serves --http N; --host localhost/127.0.0.1/::1 is taken, another host,
    a host with no port and two different ports are refused."""
    from trustbridge.bridge.mcp.foreign_flags import http_port

    assert http_port(None, 8931, None) == 8931
    assert http_port(8931, 8931, "localhost") == 8931
    assert http_port(None, 9000, "::1") == 9000 and http_port(None, None, None) is None
    for http, port, host, says in ((None, 9000, "0.0.0.0", "binds 127.0.0.1 only"),
                                   (None, None, "127.0.0.1", "give --port"),
                                   (9001, 9000, None, "different ports")):
        with pytest.raises(OptionsError, match=says):
            http_port(http, port, host)


def test_cli_refuses_a_non_loopback_host_with_exit_2(tmp_path: Path) -> None:
    """``trustbridge mcp --port 9000 --host 0.0.0.0`` exits 2 saying why, nothing started."""
    proc = subprocess.run(
        [sys.executable, "-m", "trustbridge", "mcp", "--port", "9000", "--host", "0.0.0.0"],
        capture_output=True, text=True, timeout=60, cwd=str(REPO), check=False,
        env={"PATH": "/usr/bin:/bin", "TRUSTBRIDGE_HOME": str(tmp_path)})
    assert proc.returncode == 2 and proc.stdout == ""
    assert "binds 127.0.0.1 only" in proc.stderr


def test_every_playwright_mcp_flag_is_ours_or_known() -> None:
    """Each flag of Playwright MCP 0.0.86's --help parses: ours, mapped, ignored or
    refused by name (none falls through to argparse's exit 2)."""
    import re
    import shutil

    from trustbridge.bridge.mcp.foreign_flags import FOREIGN_FLAGS

    cli_js = REPO / "scripts/conformance/node_modules/@playwright/mcp/cli.js"
    if shutil.which("node") is None or not cli_js.exists():
        pytest.skip("Playwright MCP is not installed (scripts/conformance: npm ci)")
    out = subprocess.run(["node", str(cli_js), "--help"], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    theirs = set(re.findall(r"^  (--[a-z-]+)", out, re.MULTILINE)) - {"--version", "--help"}
    assert len(theirs) > 40, out
    parser = cli.build_parser()
    known = {o for a in parser._subparsers._group_actions[0].choices["mcp"]._actions  # type: ignore[union-attr]
             for o in a.option_strings}
    assert theirs <= known, sorted(theirs - known)
    assert {f.flag for f in FOREIGN_FLAGS} & {"--browser", "--caps", "--port", "--host"} == set()


def test_the_default_viewport_is_playwrights_1280x720() -> None:
    """With no --viewport-size the browser's viewport is Playwright's default, 1280x720
    CSS px, in the launcher and in what the options say."""
    from trustbridge.bridge.mcp.options import DEFAULT_VIEWPORT
    from trustbridge.supervisor.launcher import VIEWPORT

    assert VIEWPORT == {"width": 1280, "height": 720}
    assert DEFAULT_VIEWPORT == (VIEWPORT["width"], VIEWPORT["height"])
