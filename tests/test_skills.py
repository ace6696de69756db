"""Skills in-process (issue 50): tier precedence, gating, an agent's list, the prompt budget, bad front
matter (one line each), the stat cache, skill_read's bounds and the usage record."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

from openclaw_cli.config.loading import Settings
from openclaw_cli.core.errors import NotFound
from openclaw_cli.core.paths import Home
from openclaw_cli.skills.service import AgentSkills, SkillUnavailable, SkillView, check_problems
from openclaw_cli.skills.usage import read_usage, record_use
from tests.skill_helpers import home_skills, many_skills, workspace_skills, write_skill


def _view(
    home: Path,
    settings: Settings | None = None,
    env: dict[str, str] | None = None,
    plugins: list[tuple[str, Path]] | None = None,
) -> SkillView:
    return AgentSkills(Home(home), "main", env or {}, plugins or []).view(settings or Settings())


def _names(view: SkillView) -> list[str]:
    return [skill.name for skill in view.available]


# -- where skills come from -----------------------------------------------------------------------------


def test_the_workspace_wins_over_the_home_which_wins_over_a_plugin(home: Path, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin-skills"
    write_skill(workspace_skills(home), "report", "Workspace report.")
    write_skill(home_skills(home), "report", "Home report.")
    write_skill(plugin, "report", "Plugin report.")
    write_skill(home_skills(home), "deploy", "Home deploy.")
    write_skill(plugin, "deploy", "Plugin deploy.")
    write_skill(plugin, "lint", "Plugin lint.")

    view = _view(home, plugins=[("acme", plugin)])

    by_name = {entry.skill.name: entry for entry in view.entries}
    assert sorted(by_name) == ["deploy", "lint", "report"]
    assert (by_name["report"].skill.tier, by_name["report"].skill.description) == ("workspace", "Workspace report.")
    assert by_name["report"].shadows == ("home", "acme")
    assert (by_name["deploy"].skill.tier, by_name["deploy"].skill.description) == ("home", "Home deploy.")
    assert (by_name["lint"].skill.tier, by_name["lint"].skill.source) == ("plugin", "acme")
    assert by_name["lint"].skill.folder == plugin / "lint"


def test_every_agent_shares_the_home_tier_and_keeps_its_own_workspace(home: Path) -> None:
    write_skill(home_skills(home), "shared", "For everyone.")
    write_skill(workspace_skills(home, "work"), "mine", "Work agent only.")
    work = AgentSkills(Home(home), "work", {}).view(Settings())
    main = _view(home)
    assert _names(work) == ["mine", "shared"]
    assert _names(main) == ["shared"]


def test_a_configured_workspace_is_where_its_skills_live(home: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    write_skill(elsewhere / "skills", "custom", "In the configured workspace.")
    settings = Settings(agents={"list": [{"id": "main", "workspace": str(elsewhere)}]})
    from openclaw_cli.identity.agent_config import for_agent

    assert _names(_view(home, for_agent(settings, "main"))) == ["custom"]


# -- gating -----------------------------------------------------------------------------------------------


def test_requires_bins_are_looked_up_on_the_given_path(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    tool = bin_dir / "skilltool"
    tool.write_text("#!/bin/sh\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IXUSR)
    write_skill(home_skills(home), "uses-tool", front="requires:\n  bins: [skilltool]\n")

    without = _view(home, env={"PATH": str(tmp_path / "empty")})
    with_bin = _view(home, env={"PATH": str(bin_dir)})

    [gated] = without.entries
    assert not gated.available and gated.reason == "requires.bins not on PATH: skilltool"
    assert _names(with_bin) == ["uses-tool"]


def test_requires_env_reads_the_given_mapping_never_the_process_environment(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_skill(home_skills(home), "needs-token", front="requires:\n  env: [SKILL_TEST_TOKEN]\n")
    monkeypatch.setenv("SKILL_TEST_TOKEN", "in os.environ only")

    [gated] = _view(home, env={}).entries
    assert not gated.available and gated.reason == "requires.env not set: SKILL_TEST_TOKEN"
    assert _names(_view(home, env={"SKILL_TEST_TOKEN": "x"})) == ["needs-token"]
    assert _names(_view(home, env={"SKILL_TEST_TOKEN": ""})) == []  # set but empty is not set


def test_a_gated_skill_is_never_offered_nor_read(home: Path) -> None:
    write_skill(home_skills(home), "gated", "Needs a token.", front="requires:\n  env: [NOPE_TOKEN]\n")
    write_skill(home_skills(home), "open", "Always there.")
    view = _view(home)
    block = view.block()
    assert "- open: Always there." in block.text
    assert "gated" not in block.text
    with pytest.raises(SkillUnavailable, match="requires.env not set: NOPE_TOKEN"):
        view.read("gated")
    assert view.refusal("gated") is not None and "not available" in str(view.refusal("gated"))


def test_an_agents_list_restricts_it_to_the_named_skills(home: Path) -> None:
    for name in ("alpha", "beta", "gamma"):
        write_skill(home_skills(home), name)
    settings = Settings(agents={"list": [{"id": "main", "skills": ["beta"]}]})
    view = _view(home, settings)
    assert _names(view) == ["beta"]
    reasons = {entry.skill.name: entry.reason for entry in view.entries}
    assert reasons["alpha"] == reasons["gamma"] == "not in this agent's agents.list[].skills"
    assert _names(_view(home)) == ["alpha", "beta", "gamma"]  # without a list: every skill


def test_check_names_a_listed_skill_that_does_not_exist(home: Path) -> None:
    write_skill(home_skills(home), "beta")
    settings = Settings(agents={"list": [{"id": "main", "skills": ["beta", "ghost"]}]})
    lines = check_problems(_view(home, settings), settings, "main", Home(home).config_file)
    assert lines == [f"{home / 'openclaw.json'}: agents.list[main].skills names 'ghost', which no SKILL.md defines"]


# -- the prompt block and its budget ------------------------------------------------------------------


def test_the_block_holds_names_and_descriptions_only(home: Path) -> None:
    write_skill(home_skills(home), "weekly-report", "Writes the weekly report.", body="SECRET-BODY-TEXT\n")
    text = _view(home).block().text
    assert text.startswith("## Skills")
    assert "- weekly-report: Writes the weekly report." in text
    assert "SECRET-BODY-TEXT" not in text


def test_200_skills_stay_within_max_prompt_chars_and_the_left_out_count_is_right(home: Path) -> None:
    names = many_skills(home_skills(home), 200)
    usage = Home(home).agent_dir("main") / "skill-usage.json"
    recent = names[150:160]
    for order, name in enumerate(recent):
        record_use(usage, name, 1_000_000.0 + order)
    settings = Settings(skills={"maxPromptChars": 3000})

    block = _view(home, settings).block()

    assert len(block.text) <= 3000
    listed = re.findall(r"^- (skill-\d{3}): ", block.text, re.M)
    assert listed == sorted(listed) == list(block.listed)
    assert 0 < len(listed) < 200
    assert block.left_out == 200 - len(listed)
    assert f"({block.left_out} more skills left out of this list for space;" in block.text
    assert set(recent) <= set(listed)  # the least recently used go first; the used ones stay
    assert block.shortened  # descriptions were cut before any skill was dropped


def test_descriptions_are_shortened_before_any_skill_is_dropped(home: Path) -> None:
    many_skills(home_skills(home), 20, description_chars=300)
    whole = _view(home, Settings(skills={"maxPromptChars": 200_000})).block()
    assert not whole.shortened and whole.left_out == 0

    budget = len(whole.text) // 2  # every skill still fits with shorter descriptions
    block = _view(home, Settings(skills={"maxPromptChars": budget})).block()

    assert len(block.text) <= budget
    assert block.left_out == 0 and len(block.listed) == 20
    assert block.shortened and "…" in block.text
    assert "left out" not in block.text


def test_a_budget_too_small_for_any_skill_says_how_many_were_left_out(home: Path) -> None:
    many_skills(home_skills(home), 5)
    block = _view(home, Settings(skills={"maxPromptChars": 200})).block()
    assert len(block.text) <= 200
    assert block.listed == () and block.left_out == 5


def test_an_agent_without_skills_gets_no_block(home: Path) -> None:
    view = _view(home)
    assert view.block().text == ""
    assert view.system_section(None, 0.0) == ""


# -- bad SKILL.md files: one line each ----------------------------------------------------------------


def _one_problem(home: Path) -> str:
    view = _view(home)
    assert view.entries == ()  # the bad skill is not offered
    [line] = [problem.text() for problem in view.problems]
    assert "\n" not in line
    return line


def test_a_missing_name_is_one_line(home: Path) -> None:
    path = home_skills(home) / "nameless" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\ndescription: Has no name.\n---\nBody\n", encoding="utf-8")
    assert _one_problem(home) == f"{path}:1: front matter has no 'name'"


def test_a_yaml_error_is_one_line_at_its_line(home: Path) -> None:
    path = write_skill(home_skills(home), "broken", "fine", front="requires: [unclosed\n")
    line = _one_problem(home)
    assert line.startswith(f"{path}:4: YAML error in front matter:"), line  # requires: is line 4


def test_a_1mb_skill_file_is_one_line_and_not_read(home: Path) -> None:
    path = write_skill(home_skills(home), "huge", body="x" * (1024 * 1024))
    size = path.stat().st_size
    line = _one_problem(home)
    assert line == (
        f"{path}:1: file is {size} bytes, over skills.maxFileBytes (262144); "
        "move long material into other files of the skill's folder"
    )


def test_a_name_that_is_not_its_folders_is_refused(home: Path) -> None:
    path = write_skill(home_skills(home), "other", folder="real")
    assert _one_problem(home) == f"{path}:2: name 'other' is not its folder's name 'real'"


def test_a_name_that_could_be_a_path_is_refused(home: Path) -> None:
    path = write_skill(home_skills(home), "../escape", folder="escape")
    line = _one_problem(home)
    assert line.startswith(f"{path}:2: name '../escape' is invalid"), line


def test_no_front_matter_is_one_line(home: Path) -> None:
    path = home_skills(home) / "plain" / "SKILL.md"
    path.parent.mkdir(parents=True)
    path.write_text("# Just markdown\n", encoding="utf-8")
    assert _one_problem(home) == f"{path}:1: no front matter: the file must start with a '---' line"


def test_a_fifo_named_skill_md_does_not_hang_a_turn(home: Path) -> None:
    path = home_skills(home) / "pipe" / "SKILL.md"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    assert _one_problem(home) == f"{path}:1: not a regular file"


def test_a_bad_skill_leaves_the_lower_tier_of_its_name_in_use(home: Path) -> None:
    bad = workspace_skills(home) / "report" / "SKILL.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nname: report\n---\n", encoding="utf-8")
    write_skill(home_skills(home), "report", "The home's report.")
    view = _view(home)
    assert [entry.skill.description for entry in view.entries] == ["The home's report."]
    assert [problem.text() for problem in view.problems] == [f"{bad}:1: front matter has no 'description'"]


# -- the cache, reading, usage ----------------------------------------------------------------------------


def test_an_unchanged_scan_parses_nothing_and_an_edit_is_seen(home: Path) -> None:
    many_skills(home_skills(home), 30)
    skills = AgentSkills(Home(home), "main", {})
    skills.view(Settings())
    assert skills.catalog is not None and skills.catalog.parses == 30
    skills.view(Settings())
    assert skills.catalog.parses == 30
    write_skill(home_skills(home), "skill-007", "Edited description, longer than before.")
    write_skill(home_skills(home), "brand-new", "Added later.")
    view = skills.view(Settings())
    assert skills.catalog.parses == 32
    by_name = {entry.skill.name: entry.skill.description for entry in view.entries}
    assert by_name["skill-007"] == "Edited description, longer than before."
    assert "brand-new" in by_name


def test_skill_read_gives_the_folder_and_a_bounded_body(home: Path) -> None:
    write_skill(home_skills(home), "long", body="A" * 5000 + "\n")
    view = _view(home, Settings(skills={"maxReadChars": 1000}))
    answer = view.read("long", now=42.0)
    assert answer["folder"] == str(home_skills(home) / "long")
    assert answer["body"] == "A" * 1000
    assert "maxReadChars" in answer["truncated"]
    assert read_usage(Home(home).agent_dir("main") / "skill-usage.json") == {"long": 42.0}
    with pytest.raises(NotFound):
        view.read("../../etc/passwd")


def test_the_usage_record_is_replaced_whole_and_a_damaged_one_counts_as_empty(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "skill-usage.json"
    record_use(path, "a", 1.0)
    record_use(path, "b", 2.0)
    assert json.loads(path.read_text(encoding="utf-8")) == {"a": 1.0, "b": 2.0}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["skill-usage.json"]  # no temporary file left
    path.write_text("{not json", encoding="utf-8")
    assert read_usage(path) == {}
    record_use(path, "c", 3.0)
    assert read_usage(path) == {"c": 3.0}
