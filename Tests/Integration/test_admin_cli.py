"""geochat-admin, the operator's command line, driven against the real stack:
login (token file 0600), settings get/set, rooms, bans, sessions, audit, logout."""
import json
import os
import stat
import subprocess

import pytest

from admin_support import admin_url, api, bootstrap_admin
from geochat_support.db import count
from geochat_support.protocol import chat, create, say, start, unique_nick, unique_topic
from geochat_support.waiting import wait_until


@pytest.fixture(scope="module")
def cli(stack, tmp_path_factory):
    name, password, run = bootstrap_admin(stack)
    assert run.returncode == 0, run.stdout + run.stderr
    home = tmp_path_factory.mktemp("cli-home")

    def geochat_admin(*args, stdin=None, env=None, check=True):
        environment = {k: v for k, v in os.environ.items() if not k.startswith("GEOCHAT_ADMIN_")}
        environment.update({"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}, **(env or {}))
        result = subprocess.run([os.path.join(stack["BIN_DIR"], "geochat-admin"), *args], input=stdin,
                                capture_output=True, text=True, env=environment, timeout=60)
        if check:
            assert result.returncode == 0, result.stdout + result.stderr
        return result

    geochat_admin.name, geochat_admin.password, geochat_admin.home = name, password, home
    return geochat_admin


def test_login_keeps_the_token_readable_by_its_owner_only(stack, cli):
    a = admin_url(stack["gateways"][0])  # the gateway's operators' listener
    wrong = cli("login", "--url", a, "--name", cli.name, stdin="not the password\n", check=False)
    assert wrong.returncode != 0 and "wrong name or password" in wrong.stderr
    done = cli("login", "--url", a, "--name", cli.name, stdin=cli.password + "\n")
    assert f"logged in as {cli.name}" in done.stdout
    token_file = cli.home / ".config" / "geochat" / "token"
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    saved = json.loads(token_file.read_text())
    assert saved["url"] == a and saved["token"].startswith("gca_") and saved["name"] == cli.name


def test_settings_get_and_set(stack, cli):
    shown = cli("settings", "get").stdout
    assert "presence.timeout.s" in shown and "room.cap" in shown and "rate.post.per.min" in shown
    changed = cli("settings", "set", "session.lifetime.s=2d").stdout
    assert "session.lifetime.s = 172800 (2d)" in changed
    one = cli("settings", "get", "session.lifetime.s").stdout
    assert "172800 (2d)" in one and cli.name in one
    refused = cli("settings", "set", "room.cap=0", check=False)
    assert refused.returncode != 0 and "between 1 and 5000" in refused.stderr
    bad = cli("settings", "set", "room.cap", check=False)
    assert bad.returncode != 0
    cli("settings", "set", "session.lifetime.s=86400")


def test_rooms_lists_and_removes(stack, cli):
    a = stack["gateways"][0]
    session = start(a)
    topic = unique_topic()
    room = create(a, session, 0.44, 0.55, 12, topic)
    say(a, session, room["id"], "listed")
    listing = cli("rooms", "--search", topic.split()[1]).stdout
    lines = [line for line in listing.splitlines() if line.startswith(str(room["id"]) + " ")]
    assert len(lines) == 1 and topic in lines[0], listing
    assert lines[0].split()[-2:] == ["1", "1"], listing  # members, messages
    shown = cli("rooms", "show", str(room["id"])).stdout
    assert "messages     1" in shown
    assert f"room {room['id']} removed" in cli("rooms", "remove", str(room["id"])).stdout
    wait_until(lambda: chat(a, cmd="messages", chatid=room["id"]).status == 404, message="the room gone")
    assert "no such chat room" in cli("rooms", "remove", str(room["id"]), check=False).stderr


def test_ban_bans_unban_and_sessions(stack, cli):
    a, b = stack["gateways"][:2]
    nick = unique_nick()
    session = start(b, nick)
    assert "banned nick " + nick in cli("ban", "--nick", nick, "--reason", "cli test").stdout
    assert nick in cli("bans").stdout
    wait_until(lambda: chat(b, cmd="join", sessionid=session, chatid=1).status == 403, message="the ban on B")
    sessions = cli("sessions", "--nick", nick).stdout
    assert session in sessions and "yes" in sessions
    assert "ban lifted" in cli("unban", "--nick", nick).stdout
    assert cli("ban", "--nick", nick, "--session", session, check=False).returncode != 0


def test_an_escape_sequence_in_a_login_name_is_shown_escaped(stack, cli):
    """An attacker's login name carries terminal escapes (clear the screen, set
    the title, a forged log line): the audit, the CLI's table and every log show
    them escaped, never raw."""
    attack = "root\x1b[2J\x1b]0;owned\x07\nlevel=info msg=forged"
    answer = api(stack["gateways"][0], "POST", "login", {"name": attack, "password": "x" * 14})
    assert answer.status == 401, answer
    shown = cli("audit", "--actor", "(invalid name)", "--limit", "5").stdout
    assert "\x1b" not in shown and "\x07" not in shown, repr(shown)
    # Invalid names are audited once a minute (the first one shows its name): ours, or one held back by it.
    ours = "root\\u{1B}[2J\\u{1B}]0;owned\\u{7}\\nlevel=info msg=forged"
    recent = count(stack, "SELECT count(*) FROM session.audit_log WHERE actor = '(invalid name)' "
                          "AND at > now() - interval '65 seconds'")
    assert ours in shown or recent >= 1, shown
    for log in ("session-1.log", "gateway-1.log"):
        with open(os.path.join(stack["STATE_DIR"], "logs", log), "rb") as f:
            data = f.read()
        assert b"\x1b]0;owned" not in data and b"\x1b[2J" not in data, log


def test_audit_and_logout(stack, cli):
    audit = cli("audit", "--limit", "200").stdout
    assert "settings" in audit and "remove-room" in audit and cli.name in audit
    # One page of this admin's settings changes, then the next page by the id it printed.
    page = cli("audit", "--actor", cli.name, "--action", "settings", "--limit", "1").stdout
    rows = [line for line in page.splitlines()[1:] if line and not line.startswith("more:")]
    assert len(rows) == 1 and "settings" in rows[0] and cli.name in rows[0], page
    more = [line for line in page.splitlines() if line.startswith("more: --before ")]
    if more:
        older = cli("audit", "--actor", cli.name, "--before", more[0].split()[-1]).stdout
        assert rows[0] not in older
    assert "remove-room" not in page
    assert "logged out" in cli("logout").stdout
    assert not (cli.home / ".config" / "geochat" / "token").exists()
    after = cli("rooms", "--url", admin_url(stack["gateways"][0]), check=False)
    assert after.returncode != 0 and "log in" in after.stderr
