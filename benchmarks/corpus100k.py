"""A realistic memory corpus and query set for the 100k search benchmarks (issue 23).

Memories are one-line facts of 60-130 characters as an assistant would store them: English (75%) and
Chinese (25%), built from templates over people, projects, tools, places and times, 12% carrying an
identifier (a PR number, a JIRA key, an @handle or a file path). Queries are 300: 150 sentence-length
questions, 100 keyword queries (2-3 words) and 50 identifiers taken from the corpus, English and Chinese.

Everything is seeded: the same call gives the same texts, so a built store can be cached by a hash of
this file (test_bench_search_100k.py).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

PEOPLE = [
    "Lin",
    "Maya",
    "Tom",
    "Priya",
    "Chen Jie",
    "Omar",
    "Sofia",
    "Kenji",
    "Zhang Wei",
    "Elena",
    "Raj",
    "Hannah",
    "Marco",
    "Aisha",
    "Lukas",
    "Mei",
    "Diego",
    "Nora",
    "Sam",
    "Yuki",
    "Ivan",
    "Fatima",
    "Leo",
    "Grace",
    "Ben",
    "Amara",
    "Jonas",
    "Wang Fang",
    "Carlos",
    "Ingrid",
]
PROJECTS = [
    "payments ledger",
    "settlement service",
    "mobile app",
    "search indexer",
    "billing API",
    "auth gateway",
    "data warehouse",
    "onboarding flow",
    "fraud model",
    "notification service",
    "checkout page",
    "reporting dashboard",
    "invoice exporter",
    "kafka consumer",
    "refund worker",
    "pricing engine",
    "customer portal",
    "audit log",
    "rate limiter",
    "feature flag service",
]
TOOLS = [
    "Postgres",
    "Redis",
    "Kubernetes",
    "Terraform",
    "Grafana",
    "Vim",
    "VS Code",
    "Docker",
    "Rust",
    "Go",
    "Python",
    "TypeScript",
    "Kafka",
    "Airflow",
    "Sentry",
    "GitHub Actions",
    "Emacs",
    "Neovim",
    "ClickHouse",
    "Prometheus",
    "Jenkins",
    "React",
    "Django",
    "FastAPI",
    "SQLite",
]
PLACES = [
    "Hangzhou",
    "Shanghai",
    "Berlin",
    "Lisbon",
    "Tokyo",
    "the office",
    "the cafe downstairs",
    "Singapore",
    "Chengdu",
    "Amsterdam",
    "the gym",
    "Kyoto",
    "Barcelona",
    "Seoul",
    "the coworking space",
]
TIMES = [
    "on Monday",
    "last Friday",
    "in March",
    "every morning",
    "after lunch",
    "before the release",
    "during the offsite",
    "in the spring",
    "last weekend",
    "on Thursday night",
    "in Q3",
    "next sprint",
    "after the incident",
    "in early June",
    "around Christmas",
]
FOODS = [
    "oat milk latte",
    "black coffee",
    "green tea",
    "dumplings",
    "ramen",
    "spicy hotpot",
    "avocado toast",
    "mango smoothie",
    "sushi",
    "pho",
    "dark chocolate",
    "jasmine tea",
    "espresso",
    "noodle soup",
]
PROBLEMS = [
    "connection pool timeouts",
    "a memory leak",
    "flaky integration tests",
    "slow cold starts",
    "duplicate webhook deliveries",
    "a race in the retry loop",
    "disk filling up",
    "stale cache entries",
    "TLS certificate expiry",
    "a deadlock in migrations",
    "clock skew between nodes",
    "OOM kills",
]
HOBBIES = [
    "bouldering",
    "sourdough baking",
    "trail running",
    "chess",
    "watercolour painting",
    "cycling",
    "playing the guitar",
    "photography",
    "swimming",
    "board games",
    "birdwatching",
    "yoga",
]
FAMILY = ["daughter", "son", "wife", "husband", "mother", "father", "sister", "brother"]

EN_TEMPLATES = [
    "{p} prefers {food} {time} and gets grumpy when the {proj} standup runs long.",
    "{p} fixed {prob} in the {proj} {time} by tuning {tool} settings.",
    "Decided to migrate the {proj} from {tool} to {tool2} {time}; {p} owns the plan.",
    "{p} is allergic to peanuts and always orders {food} when the team eats out in {place}.",
    "Lesson: {prob} in the {proj} came from missing alerts in {tool}; add a dashboard first.",
    "{p}'s {fam} starts school in September; they moved to {place} {time}.",
    "{p} likes {hobby} on weekends and wants to try it in {place} {time}.",
    "The {proj} deploy {time} broke because of {prob}; rollback took forty minutes.",
    "{p} uses {tool} with a dark theme and vim keybindings for all {proj} work.",
    "Meeting with {p} {time}: agreed the {proj} needs load tests before launch.",
    "{p} reviews {proj} changes carefully and asks for tests around {prob}.",
    "Planning a trip to {place} {time} with {p}; booked a hotel near the station.",
    "{p} thinks {tool} is overkill for the {proj} and would rather use {tool2}.",
    "Postmortem for the {proj}: {prob} after a config change in {tool} {time}.",
    "{p} asked me to remind them about the {proj} budget review {time}.",
    "Bought {food} for {p}'s birthday party {time}; they loved it.",
    "The {proj} on-call rotation changes {time}; {p} takes the first week.",
    "{p} recommended a book about {tool} internals; I should read it {time}.",
]
EN_IDS = [
    "{p} opened PR #{n} to fix {prob} in the {proj}.",
    "Ticket {key}-{n} tracks {prob} in the {proj}; {p} is assigned.",
    "Ask @{handle} about {prob} in the {proj} before {time2}.",
    "The bug in {path} caused {prob} in the {proj} {time}.",
    "PR #{n} by @{handle} changes how the {proj} talks to {tool}.",
    "{key}-{n}: move the {proj} config from {path} into {tool}.",
]
ZH_PEOPLE = ["林伟", "陈静", "王芳", "张伟", "李娜", "刘洋", "赵敏", "孙磊", "周杰", "吴婷", "郑浩", "朵朵"]
ZH_PROJECTS = [
    "支付账本",
    "结算服务",
    "移动端应用",
    "搜索索引",
    "计费接口",
    "登录网关",
    "数据仓库",
    "风控模型",
    "消息推送",
    "报表系统",
    "退款流程",
    "定价引擎",
]
ZH_PLACES = ["杭州", "上海", "成都", "北京", "深圳", "宁波", "西湖边", "公司楼下", "滨江区", "苏州"]
ZH_TIMES = [
    "上周五",
    "周一早上",
    "三月份",
    "每天早上",
    "午饭后",
    "发布之前",
    "国庆假期",
    "上个周末",
    "下个迭代",
    "年底",
    "春节前后",
    "出事之后",
]
ZH_FOODS = [
    "燕麦拿铁",
    "黑咖啡",
    "龙井茶",
    "小笼包",
    "火锅",
    "牛肉面",
    "寿司",
    "豆浆油条",
    "奶茶",
    "葱油拌面",
]
ZH_PROBLEMS = [
    "连接池超时",
    "内存泄漏",
    "集成测试不稳定",
    "冷启动太慢",
    "重复回调",
    "磁盘写满",
    "缓存过期",
    "证书过期",
    "迁移死锁",
    "时钟不同步",
]
ZH_HOBBIES = ["攀岩", "烘焙", "跑步", "下围棋", "画水彩", "骑自行车", "弹吉他", "摄影", "游泳", "钓鱼"]
ZH_TEMPLATES = [
    "{p}每天{time}都喝{food}，说不喝就没法专心写代码，开会的时候也经常端着一杯。",
    "{p}在{time}修好了{proj}的{prob}问题，原因是{tool}的配置写错了，大家都松了一口气。",
    "{p}的女儿今年九月上小学，全家{time}搬到了{place}，离学校走路只要十分钟左右。",
    "{p}周末喜欢{hobby}，打算{time}去{place}试试，还想拉上同事一起去玩。",
    "团队决定{time}把{proj}从{tool}迁移到{tool2}，由{p}负责整体方案和上线计划。",
    "{proj}在{time}上线后出现了{prob}，回滚用了四十分钟，复盘会上{p}提了三条改进。",
    "教训：{proj}的{prob}是因为{tool}没有配置告警，以后上线之前先把监控面板建好。",
    "{p}对花生过敏，每次团队在{place}聚餐都会点{food}，大家已经记住这件事了。",
    "和{p}约好{time}一起去{place}出差，酒店订在火车站附近，方便早上赶去客户那里。",
    "{p}觉得{proj}用{tool}太重了，更想用{tool2}，下次技术评审的时候再好好讨论。",
]
ZH_IDS = [
    "{p}提交了 PR #{n}，修复{proj}里的{prob}问题，需要在{time}之前合并进主干分支。",
    "工单 {key}-{n} 跟踪{proj}的{prob}，目前由{p}负责处理，预计{time}能够解决掉。",
    "{proj}的{prob}是 {path} 里的一个错误引起的，{p}在{time}发现并且写了复盘文档。",
]
KEYS = ["PAY", "OPS", "INFRA", "BILL", "AUTH", "DATA", "MOB", "SRCH"]
HANDLES = ["lin-wei", "maya_k", "tomdev", "priya.s", "chenjie", "omar", "sofia-r", "kenji", "elena_b", "raj"]
DIRS = ["src/payments", "services/ledger", "app/models", "lib/retry", "cmd/worker", "infra/terraform"]
FILES = ["ledger.py", "pool.go", "config.yaml", "retry.ts", "main.rs", "schema.sql", "handler.py"]

ID_SHARE = 0.12
CATEGORIES = ("profile", "preference", "event", "case", "lesson", "insight", "note")
CHINESE_SHARE = 0.25


@dataclass(frozen=True)
class Query:
    text: str
    kind: str  # sentence, keyword or identifier
    language: str  # en or zh


def _english(rng: random.Random, with_id: bool) -> str:
    template = rng.choice(EN_IDS if with_id else EN_TEMPLATES)
    tool, tool2 = rng.sample(TOOLS, 2)
    return template.format(
        p=rng.choice(PEOPLE),
        proj=rng.choice(PROJECTS),
        tool=tool,
        tool2=tool2,
        place=rng.choice(PLACES),
        time=rng.choice(TIMES),
        time2=rng.choice(TIMES).split(" ", 1)[-1],
        food=rng.choice(FOODS),
        prob=rng.choice(PROBLEMS),
        hobby=rng.choice(HOBBIES),
        fam=rng.choice(FAMILY),
        n=rng.randint(100, 99999),
        key=rng.choice(KEYS),
        handle=rng.choice(HANDLES),
        path=f"{rng.choice(DIRS)}/{rng.choice(FILES)}",
    )


def _chinese(rng: random.Random, with_id: bool) -> str:
    template = rng.choice(ZH_IDS if with_id else ZH_TEMPLATES)
    tool, tool2 = rng.sample(TOOLS, 2)
    return template.format(
        p=rng.choice(ZH_PEOPLE),
        proj=rng.choice(ZH_PROJECTS),
        tool=tool,
        tool2=tool2,
        place=rng.choice(ZH_PLACES),
        time=rng.choice(ZH_TIMES),
        food=rng.choice(ZH_FOODS),
        prob=rng.choice(ZH_PROBLEMS),
        hobby=rng.choice(ZH_HOBBIES),
        n=rng.randint(100, 99999),
        key=rng.choice(KEYS),
        path=f"{rng.choice(DIRS)}/{rng.choice(FILES)}",
    )


# A clause that makes a repeated sentence a new memory, as real notes differ in their details.
EN_TAILS = [
    "Noted again",
    "Mentioned in chat",
    "Still true",
    "Confirmed later",
    "Said twice",
    "Worth keeping",
]
ZH_TAILS = ["又提了一次", "聊天时说的", "后来确认过", "仍然如此", "值得记住"]


def memories(count: int, seed: int = 23) -> list[str]:
    """`count` distinct memory texts of 60-130 characters."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        chinese = rng.random() < CHINESE_SHARE
        with_id = rng.random() < ID_SHARE
        text = _chinese(rng, with_id) if chinese else _english(rng, with_id)
        while chinese and len(text) < 60:  # Chinese says in 30 characters what English says in 80
            text = f"{text[:-1]}；{_chinese(rng, False)}"
        if text in seen:
            tail = rng.choice(ZH_TAILS if chinese else EN_TAILS)
            text = (
                f"{text[:-1]}，{tail}（{rng.randint(1, 9999)}）。"
                if chinese
                else f"{text} {tail} ({rng.randint(1, 9999)})."
            )
        if not 60 <= len(text) <= 130 or text in seen:
            continue
        seen.add(text)
        out.append(text)
    return out


EN_QUESTIONS = [
    "what does {p} like to drink in the morning",
    "how did we fix the {prob} problem in the {proj}",
    "why did the {proj} deploy fail and how long was the rollback",
    "which editor and theme does {p} use",
    "who is on call for the {proj} next week",
    "what did we decide about moving the {proj} to {tool}",
    "what lesson did we learn from the {proj} outage",
    "where is {p} travelling and when",
    "what food allergy does {p} have",
    "what hobbies does {p} enjoy at the weekend",
]
ZH_QUESTIONS = [
    "{p}早上喜欢喝什么",
    "{proj}的{prob}问题是怎么解决的",
    "{p}周末喜欢做什么",
    "{proj}为什么要迁移到{tool}",
    "{proj}上线出了什么问题",
]
EN_KEYWORDS = ["{tool} {prob}", "{proj} rollback", "{p} {food}", "{hobby} {place}", "{proj} {tool}"]
ZH_KEYWORDS = ["{proj} {prob}", "{p} {food}", "{hobby}", "{proj} 回滚"]


def queries(corpus: list[str], seed: int = 29) -> list[Query]:
    """150 sentence queries (100 English, 50 Chinese), 100 keyword (70/30) and 50 identifiers from `corpus`."""
    rng = random.Random(seed)

    def fill(template: str, zh: bool) -> str:
        return template.format(
            p=rng.choice(ZH_PEOPLE if zh else PEOPLE),
            proj=rng.choice(ZH_PROJECTS if zh else PROJECTS),
            prob=rng.choice(ZH_PROBLEMS if zh else PROBLEMS),
            tool=rng.choice(TOOLS),
            food=rng.choice(ZH_FOODS if zh else FOODS),
            hobby=rng.choice(ZH_HOBBIES if zh else HOBBIES),
            place=rng.choice(PLACES),
        )

    out = [Query(fill(rng.choice(EN_QUESTIONS), False), "sentence", "en") for _ in range(100)]
    out += [Query(fill(rng.choice(ZH_QUESTIONS), True), "sentence", "zh") for _ in range(50)]
    out += [Query(fill(rng.choice(EN_KEYWORDS), False), "keyword", "en") for _ in range(70)]
    out += [Query(fill(rng.choice(ZH_KEYWORDS), True), "keyword", "zh") for _ in range(30)]
    out += [Query(ident, "identifier", lang) for ident, lang in _identifiers(corpus, rng, 50)]
    return out


def _identifiers(corpus: list[str], rng: random.Random, count: int) -> list[tuple[str, str]]:
    import re

    pattern = re.compile(r"PR #\d+|[A-Z]{2,5}-\d+|@[\w.-]+\w|[a-z]+/[a-z]+/[a-z]+\.[a-z]+")
    found: list[tuple[str, str]] = []
    for text in rng.sample(corpus, len(corpus)):
        match = pattern.search(text)
        if match:
            found.append((match.group(0), "en" if text.isascii() else "zh"))
        if len(found) == count:
            break
    return found
