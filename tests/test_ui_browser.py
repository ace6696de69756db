"""The Control UI (issue 56) in a real browser: Debian's Chromium driven by Playwright, against a real gateway
process with a real store. One browser and one gateway for the whole module; the tests run in file order,
from signing in to signing out (each leaves the store as the next expects)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright import sync_api as playwright_sync
from playwright.sync_api import expect

from tests.fake_openai import FakeOpenAI, asking
from tests.gateway_helpers import Gateway, echo_last_user, start_gateway, write_config
from tests.ui_helpers import SCREENS, XSS, Attacker, chromium_path, seed_store

MAX_FAILURES = 3


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    server.respond_with(echo_last_user)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory, fake: FakeOpenAI) -> Iterator[Gateway]:
    home = tmp_path_factory.mktemp("ui") / "home"
    write_config(
        home,
        fake,
        memory={"extraction": {"enabled": False}},
        gateway={"auth": {"maxFailures": MAX_FAILURES, "windowSeconds": 600}},
    )
    seed_store(home)
    gw = start_gateway(home)
    yield gw
    gw.stop()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_sync.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium_path(), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ui-screenshots")


class Tab:
    """The signed-in page, and every dialog a script opened (an XSS payload that ran would open one)."""

    def __init__(self, gateway: Gateway, page: Any) -> None:
        self.gateway = gateway
        self.page = page
        self.dialogs: list[str] = []
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def go(self, path: str) -> Any:
        return self.page.goto(self.gateway.http + path)

    def pwned(self) -> Any:
        return self.page.evaluate("window.__pwned || null")


@pytest.fixture(scope="module")
def tab(browser: Any, gateway: Gateway) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield Tab(gateway, context.new_page())
    context.close()


def sign_in(page: Any, gateway: Gateway, token: str) -> Any:
    page.goto(gateway.http + "/ui/login")
    page.get_by_label("Gateway token").fill(token)
    with page.expect_navigation() as nav:
        page.get_by_role("button", name="Sign in").click()
    return nav.value


def test_a_page_without_signing_in_is_401(tab: Tab) -> None:
    response = tab.go("/ui/memories")
    assert response.status == 401
    assert tab.page.get_by_role("link", name="Sign in").is_visible()


def test_sign_in_with_the_token(tab: Tab, gateway: Gateway) -> None:
    response = sign_in(tab.page, gateway, gateway.token)
    assert response.status == 200 and tab.page.url.endswith("/ui/memories")
    assert tab.page.locator("#acting").inner_text().startswith("owner")
    cookie = next(c for c in tab.page.context.cookies() if c["name"] == "openclaw_ui")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert gateway.token not in tab.page.url
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp


def test_search_in_english_with_the_explanation(tab: Tab) -> None:
    tab.go("/ui/memories")
    tab.page.get_by_label("Search").fill("what is Alice's job")
    tab.page.get_by_role("button", name="Search").click()
    first = tab.page.locator("#results li").first
    assert "nurse" in first.locator(".l0").inner_text()
    first.get_by_text("Why this result").click()
    explanation = first.locator(".explain pre").inner_text()
    assert "score = relevance" in explanation and "recall" in explanation
    assert "words" in tab.page.locator("#words").inner_text()


def test_search_in_chinese(tab: Tab) -> None:
    response = tab.go("/ui/memories?q=" + "乌龙茶")
    assert response.status == 200
    first = tab.page.locator("#results li").first
    assert "乌龙茶" in first.locator(".l0").inner_text()
    first.get_by_text("Why this result").click()
    assert "score = relevance" in first.locator(".explain pre").inner_text()


def test_filters_by_person_and_category(tab: Tab) -> None:
    tab.go("/ui/memories")
    tab.page.get_by_label("Person").select_option("bob")
    tab.page.get_by_label("Category").select_option("preference")
    tab.page.get_by_role("button", name="Search").click()
    rows = tab.page.locator("#memory-list tbody tr")
    texts = rows.all_inner_texts()
    assert texts and all("bob" in t and "preference" in t for t in texts)
    tab.go("/ui/memories?since=2999-01-01")
    assert tab.page.locator("#memory-list tbody tr").count() == 0


def test_edit_a_memory_and_see_its_history(tab: Tab) -> None:
    tab.go("/ui/memories?q=nurse")
    tab.page.locator("#results li .l0").first.click()
    tab.page.get_by_label("Text").fill("Alice works as a surgeon in Lyon")
    tab.page.get_by_label("Why (kept in the history)").fill("she changed jobs")
    tab.page.get_by_role("button", name="Save").click()
    assert tab.page.locator("#memory-text").inner_text() == "Alice works as a surgeon in Lyon"
    rows = tab.page.locator("#history tbody tr").all_inner_texts()
    assert any("update" in r and "nurse" in r and "she changed jobs" in r for r in rows)
    tab.go("/ui/memories?q=surgeon")
    assert "surgeon" in tab.page.locator("#results li .l0").first.inner_text()


def test_a_bad_edit_is_refused_with_a_message_and_changes_nothing(tab: Tab) -> None:
    tab.go("/ui/memories?q=tea")
    tab.page.locator("#results li .l0", has_text="Alice prefers tea").click()
    memory_url = tab.page.url
    tab.page.get_by_label("Text").fill("   ")
    with tab.page.expect_navigation() as nav:
        tab.page.get_by_role("button", name="Save").click()
    assert nav.value.status == 400 and "empty" in tab.page.locator("#error").inner_text()
    tab.page.goto(memory_url)
    assert tab.page.locator("#memory-text").inner_text() == "Alice prefers tea over coffee"
    assert tab.page.locator("#history tbody tr").count() == 1  # the add, and nothing since


def test_delete_a_memory(tab: Tab) -> None:
    tab.go("/ui/memories?q=sailing")
    tab.page.locator("#results li .l0").first.click()
    url = tab.page.url
    tab.page.get_by_role("button", name="Delete this memory").click()
    assert tab.page.url.endswith("/ui/memories")
    assert tab.go(url[len(tab.gateway.http) :]).status == 404
    tab.go("/ui/memories?q=sailing")
    assert tab.page.locator("#results li").count() == 0 and tab.page.locator("#no-results").is_visible()


def test_workspace_notes_link_to_their_lines(tab: Tab) -> None:
    tab.go("/ui/workspace")
    tab.page.get_by_role("link", name="MEMORY.md").click()
    line = tab.page.locator("#L2")
    assert "tabs" in line.inner_text()
    assert tab.go("/ui/workspace?file=../../openclaw.json").status == 404
    tab.go("/ui/memories?q=tabs")  # the indexed MEMORY.md: a hit links to its lines
    link = tab.page.locator("#results a.meta", has_text="MEMORY.md:").first
    start = link.inner_text().split(":")[1].split("-")[0]  # MEMORY.md:START-END
    link.click()
    assert tab.page.url.endswith(f"/ui/workspace?file=MEMORY.md#L{start}")
    assert tab.page.locator("#lines li:target").get_attribute("id") == f"L{start}"


def test_xss_corpus_shows_as_text_on_every_page(tab: Tab, shots: Path) -> None:
    for path in (
        "/ui/memories",
        "/ui/memories?q=script",
        "/ui/people",
        "/ui/sessions",
        "/ui/channels",
        "/ui/workspace?file=MEMORY.md",
        "/ui/health",
        "/ui/memories?person=" + "%3Cb%3Ex%3C%2Fb%3E",
    ):
        tab.go(path)
        assert tab.pwned() is None, path
    tab.go("/ui/memories?person=mallory")
    body = tab.page.locator("main").inner_text()
    for payload in XSS:
        assert payload in body  # shown literally, as text
    first = tab.page.locator("#memory-list a").first
    first.click()
    assert tab.pwned() is None and tab.page.locator("#text").input_value() in XSS
    tab.go("/ui/channels")
    assert "<img src=x onerror=" in tab.page.locator("#pairing").inner_text()
    tab.go("/ui/people")
    assert "<b>x</b>" in tab.page.locator("#people").inner_text()
    assert tab.pwned() is None and tab.dialogs == []


def test_approve_a_pairing_request(tab: Tab, gateway: Gateway) -> None:
    from openclaw_cli.channels.report import access_store

    tab.go("/ui/channels")
    row = tab.page.locator("#pairing tbody tr", has_text="424242")
    row.get_by_role("button", name="Approve").click()
    assert tab.page.locator("#pairing tbody tr", has_text="424242").count() == 0
    assert "No open pairing requests" in tab.page.locator("#pairing").inner_text()
    assert access_store(gateway.home, "telegram").approved() == {"424242"}


def test_chat_streams_the_reply(tab: Tab, fake: FakeOpenAI) -> None:
    tab.go("/ui/chat")
    expect(tab.page.locator("#chat-state")).to_have_text("connected")
    text = "hello <b>there</b>"
    with fake.holding(only=asking(text)) as hold:  # the reply's first chunk is sent, the rest held
        tab.page.get_by_label("Message").fill(text)
        tab.page.get_by_role("button", name="Send").click()
        assert hold.wait_arrived()
        partial = tab.page.locator("#chat-log li.assistant:not([data-state]) .text").last
        expect(partial).to_have_text(re.compile(r"^echo"))  # the first chunk, shown before the rest came
        begun = partial.inner_text()
        assert tab.page.locator("#chat-state").inner_text() == "replying…"
        assert tab.page.get_by_role("button", name="Stop").is_enabled()
        hold.open()
    reply = tab.page.locator("#chat-log li.assistant[data-state='final']").last
    reply.wait_for()
    assert reply.locator(".text").inner_text() == "echo: " + text
    assert ("echo: " + text).startswith(begun)


def test_chat_stop_button_aborts_the_reply(tab: Tab, fake: FakeOpenAI) -> None:
    tab.go("/ui/chat")
    expect(tab.page.locator("#chat-state")).to_have_text("connected")
    with fake.holding(only=asking("a long story please")) as hold:
        tab.page.get_by_label("Message").fill("a long story please")
        tab.page.get_by_role("button", name="Send").click()
        assert hold.wait_arrived()
        expect(tab.page.locator("#chat-state")).to_have_text("replying…")
        tab.page.get_by_role("button", name="Stop").click()
        expect(tab.page.locator("#chat-state")).to_have_text("stopping…")
        hold.open()  # the answer comes, too late for the stopped run
    expect(tab.page.locator("#chat-log li.assistant").last).to_have_attribute("data-state", "aborted")
    assert tab.page.get_by_role("button", name="Send").is_enabled()


def test_sessions_list_transcript_and_search(tab: Tab) -> None:
    tab.go("/ui/sessions")
    tab.page.locator("#session-list a", has_text="agent:main:main").click()
    assert "hello <b>there</b>" in tab.page.locator("#transcript").inner_text()
    tab.go("/ui/sessions?q=there")
    assert tab.page.locator("#transcript-results li").count() >= 1


def test_health_page(tab: Tab) -> None:
    tab.go("/ui/health")
    assert "ready" in tab.page.locator("#gateway-status").inner_text()
    jobs = tab.page.locator("#cron tbody td:first-child").all_inner_texts()
    assert [j.split()[0] for j in jobs] == ["sweep", "backup", "indexCheck", "reflect"]
    assert "memory.sqlite: 0 backup(s)" in tab.page.locator("#backups").inner_text()
    findings = tab.page.locator("#findings").inner_text()
    assert "memory.index" in findings and "<b>x</b>" in findings  # doctor's, the person's id as text


def test_purge_a_person_behind_a_typed_confirmation(tab: Tab) -> None:
    tab.go("/ui/people")
    tab.page.locator("#people tr", has_text="bob").get_by_role("link", name="Purge…").click()
    assert int(tab.page.locator("#purge-count").inner_text()) == 3
    assert "sailing" not in tab.page.locator("#purge-sample").inner_text()
    tab.page.get_by_label("Type bob to confirm").fill("bo")
    tab.page.get_by_role("button", name="Purge bob").click()
    assert "does not match" in tab.page.locator("#error").inner_text()
    tab.go("/ui/people/purge?person=bob")
    tab.page.get_by_label("Type bob to confirm").fill("bob")
    tab.page.get_by_role("button", name="Purge bob").click()
    assert "Purged bob" in tab.page.locator("#purged").inner_text()
    assert "bob" not in tab.page.locator("#people").inner_text()
    tab.go("/ui/memories?q=bob")
    assert tab.page.locator("#results li").count() == 0


def test_acting_as_a_person_shows_only_theirs(tab: Tab) -> None:
    tab.go("/ui/memories")
    tab.page.get_by_label("Acting as").fill("alice")
    tab.page.get_by_role("button", name="Switch").click()
    assert tab.page.locator("#acting").inner_text() == "person alice"
    users = tab.page.locator("#memory-list tbody tr td:nth-child(2)").all_inner_texts()
    assert users and set(users) == {"alice"}
    assert tab.go("/ui/people/purge?person=mallory").status == 400
    tab.page.get_by_label("Acting as").fill("")
    tab.page.get_by_role("button", name="Switch").click()
    assert tab.page.locator("#acting").inner_text().startswith("owner")


def test_screenshots_at_desktop_and_phone_width(tab: Tab, shots: Path) -> None:
    for width, name in ((1280, "desktop"), (360, "phone")):
        tab.page.set_viewport_size({"width": width, "height": 800})
        for page in SCREENS:
            tab.go(page)
            if tab.page.locator("#results summary").count():
                tab.page.locator("#results summary").first.click()  # the first result's explanation shown
            slug = re.sub(r"\W+", "-", page.removeprefix("/ui/")).strip("-")
            tab.page.screenshot(path=str(shots / f"{slug}-{name}.png"), full_page=True)
        # nothing runs off the side at 360 px: every page fits its width
        assert tab.page.evaluate("document.documentElement.scrollWidth") <= width + 1
    tab.page.set_viewport_size({"width": 1280, "height": 900})
    assert len(list(shots.glob("*.png"))) == 2 * len(SCREENS)


def test_keyboard_reaches_the_search(tab: Tab) -> None:
    tab.go("/ui/memories")
    tab.page.keyboard.press("Tab")  # the skip link first
    tab.page.keyboard.press("Enter")
    for _ in range(30):
        tab.page.keyboard.press("Tab")
        if tab.page.evaluate("document.activeElement.id") == "q":
            break
    assert tab.page.evaluate("document.activeElement.id") == "q"
    tab.page.keyboard.type("Lyon")
    tab.page.keyboard.press("Enter")
    tab.page.wait_for_url(re.compile(r"q=Lyon"))
    unlabeled = tab.page.evaluate(
        "[...document.querySelectorAll('input:not([type=hidden]),select,textarea')]"
        ".filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label')).length"
    )
    assert unlabeled == 0


def test_a_forged_cross_site_post_is_refused(tab: Tab) -> None:
    tab.go("/ui/memories?q=Lyon")
    tab.page.locator("#results li .l0").first.click()
    memory_path = tab.page.url[len(tab.gateway.http) :]
    attacker = Attacker(tab.gateway.http + memory_path + "/delete")
    try:
        with tab.page.expect_navigation(url=re.compile(r"/delete$")) as nav:
            tab.page.goto(attacker.url)
        assert nav.value.status in (401, 403)
    finally:
        attacker.close()
    # with the session's cookie but no CSRF token, and with another Origin: refused too
    request = tab.page.context.request
    assert request.post(tab.gateway.http + memory_path + "/delete", form={"csrf": "guess"}).status == 403
    csrf = tab.go(memory_path) and tab.page.locator("#delete-form input[name=csrf]").input_value()
    forged = request.post(
        tab.gateway.http + memory_path + "/delete",
        form={"csrf": csrf},
        headers={"Origin": "http://evil.test"},
    )
    assert forged.status == 403
    assert tab.go(memory_path).status == 200  # still there


def test_wrong_token_is_refused_and_the_lockout_applies(browser: Any, gateway: Gateway) -> None:
    context = browser.new_context()
    page = context.new_page()
    try:
        statuses = [sign_in(page, gateway, "wrong-token-0123456789").status for _ in range(MAX_FAILURES + 1)]
        assert statuses == [401] * MAX_FAILURES + [429]
        assert "too many failed attempts" in page.locator("#login-error").inner_text()
        assert page.goto(gateway.http + "/ui/memories").status == 401
        assert sign_in(page, gateway, gateway.token).status == 200  # the right token is always let in
    finally:
        context.close()


def test_the_websocket_takes_the_session_cookie_from_this_origin_only(tab: Tab, gateway: Gateway) -> None:
    from websockets.exceptions import InvalidStatus
    from websockets.sync.client import connect

    from tests.gateway_helpers import request

    cookie = next(c for c in tab.page.context.cookies() if c["name"] == "openclaw_ui")
    signed = {"Cookie": f"openclaw_ui={cookie['value']}"}
    with connect(gateway.ws_url, additional_headers={**signed, "Origin": gateway.http}) as conn:
        assert request(conn, "health")["ok"]
    for headers in (
        {**signed, "Origin": "http://evil.test"},  # a cross-site page's socket
        {**signed},  # no Origin: not a page of this gateway
        {"Cookie": "openclaw_ui=forged", "Origin": gateway.http},
    ):
        with pytest.raises(InvalidStatus), connect(gateway.ws_url, additional_headers=headers):
            pass


def test_log_out_then_a_direct_url_is_401(tab: Tab) -> None:
    tab.go("/ui/memories")
    old = next(c for c in tab.page.context.cookies() if c["name"] == "openclaw_ui")
    tab.page.get_by_role("button", name="Log out").click()
    assert tab.page.url.endswith("/ui/login")
    assert tab.go("/ui/memories").status == 401
    tab.page.context.add_cookies([old])  # the old cookie replayed: the session is gone on the server
    assert tab.go("/ui/health").status == 401
    assert tab.page.context.request.get(tab.gateway.http + "/ui/people").status == 401
