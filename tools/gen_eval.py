"""Generate the hard-negative distractor memories of the retrieval eval set (fixtures/eval/distractors.jsonl).

    python tools/gen_eval.py                 # (re)write fixtures/eval/distractors.jsonl
    python tools/gen_eval.py --out FILE      # write somewhere else (the fixture test compares the bytes)

Deterministic: seeded `random.Random`, no network, no model. Every record gets its own generator seeded
from (SEED, index, attempt), so a record rejected by a rule is redrawn without shifting any other record.

What it writes: months' worth of memories that compete with the real answers without being answers.
- For `u-lin` and `u-sam` every distractor is about ANOTHER person in the user's life (a friend's city,
  a colleague's PR, the sister's birth date, a neighbour's allergy), never about the user himself, so it
  can never answer a query about the user. Fixed people (the cast) keep their city, job and birth date
  across records.
- For the extra users (`u-mei`, `u-hao`, `u-omar`) about a third of the records are about the user
  herself/himself (fixed profile); they carry the real identifiers (PR #342, JIRA-4521, v2.3.1) and
  keywords (Hangzhou, coffee, birthday) so that a search ignoring `userId` is punished.
- Rules checked before a record is kept (and again by tests/test_eval_fixture.py): a distractor never
  names an identifier that one of its user's `identifier` queries asks for, never contains the word of one
  of its user's `zh-2char` queries, and never contains every word of one of its user's `keyword` queries.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
EVAL_DIR = ROOT / "fixtures" / "eval"
OUT = EVAL_DIR / "distractors.jsonl"
SEED = 20260115
COUNT = 1850

CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")


def identifier_pattern(identifier: str) -> re.Pattern[str]:
    """Same boundaries as the fixture test: '#342' never matches '#3421', 'v2.3.1' never 'v2.3.10'."""
    return re.compile(r"(?<![\w#@.-])" + re.escape(identifier) + r"(?![\w])", re.IGNORECASE)


def script_of(text: str) -> str:
    if not CJK.search(text):
        return "en"
    return "mixed" if LATIN_WORD.search(text) else "zh"


# --- vocabulary -------------------------------------------------------------------------------------

EN_NAMES = [
    "Bob",
    "Priya",
    "Marcus",
    "Hannah",
    "Tom",
    "Elena",
    "Diego",
    "Fatima",
    "Kevin",
    "Sophie",
    "Raj",
    "Olivia",
    "Jonas",
    "Aisha",
    "Liam",
    "Chloe",
    "Mateo",
    "Nina",
    "Ethan",
    "Grace",
    "Yusuf",
    "Clara",
    "Daniel",
    "Ingrid",
    "Felix",
    "Maya",
    "Oscar",
    "Zoe",
    "Arjun",
    "Lucy",
    "Pablo",
    "Freya",
]
ZH_PEOPLE = [  # (romanised, Chinese)
    ("Wang Hao", "王浩"),
    ("Xiao Wang", "小王"),
    ("Li Na", "李娜"),
    ("Zhang Qiang", "张强"),
    ("Ajie", "阿杰"),
    ("Liu Yang", "刘洋"),
    ("Chen Xi", "陈曦"),
    ("Zhao Lei", "赵磊"),
    ("Sun Li", "孙丽"),
    ("Zhou Bin", "周斌"),
    ("Xu Ting", "徐婷"),
    ("Ma Jun", "马骏"),
    ("Huang Yan", "黄艳"),
    ("Gao Feng", "高峰"),
    ("Lao Zhou", "老周"),
    ("Xiao Mei", "小美"),
    ("He Jing", "何静"),
    ("Luo Qi", "罗琪"),
    ("Tang Wei", "唐伟"),
    ("Feng Yu", "冯雨"),
    ("Song Jia", "宋佳"),
    ("Deng Chao", "邓超"),
    ("Xie Nan", "谢楠"),
    ("Pan Tao", "潘涛"),
]
RELATIONS = [  # (English, Chinese) -- never the wife, daughter or parents, who have real memories
    ("friend", "朋友"),
    ("colleague", "同事"),
    ("teammate", "组里的同事"),
    ("neighbour", "邻居"),
    ("gym buddy", "健身搭子"),
    ("old classmate", "大学同学"),
    ("manager", "领导"),
    ("former colleague", "前同事"),
    ("climbing buddy", "攀岩搭子"),
    ("former roommate", "以前的室友"),
    ("new hire", "新来的同事"),
    ("friend from university", "老同学"),
    ("landlord", "房东"),
    ("colleague", "隔壁组的同事"),
]
CITIES = [  # (English, Chinese) -- no Hangzhou or Ningbo for the other people of u-lin
    ("Toronto", "多伦多"),
    ("Shenzhen", "深圳"),
    ("Chengdu", "成都"),
    ("Beijing", "北京"),
    ("Suzhou", "苏州"),
    ("Wuhan", "武汉"),
    ("Xiamen", "厦门"),
    ("Singapore", "新加坡"),
    ("Berlin", "柏林"),
    ("London", "伦敦"),
    ("Vancouver", "温哥华"),
    ("Nanjing", "南京"),
    ("Guangzhou", "广州"),
    ("Osaka", "大阪"),
    ("Seattle", "西雅图"),
    ("Qingdao", "青岛"),
    ("Xi'an", "西安"),
    ("Kunming", "昆明"),
    ("Melbourne", "墨尔本"),
    ("Tianjin", "天津"),
    ("Changsha", "长沙"),
    ("Dalian", "大连"),
    ("Lisbon", "里斯本"),
    ("Taipei", "台北"),
]
JOBS = [
    ("product manager", "产品经理"),
    ("data analyst", "数据分析师"),
    ("nurse", "护士"),
    ("SRE", "运维工程师"),
    ("frontend developer", "前端工程师"),
    ("UX designer", "交互设计师"),
    ("accountant", "会计"),
    ("high-school physics teacher", "高中物理老师"),
    ("lawyer", "律师"),
    ("QA engineer", "测试工程师"),
    ("architect", "建筑师"),
    ("sales director", "销售总监"),
    ("iOS developer", "iOS 开发"),
    ("dentist", "牙医"),
    ("PhD student", "博士生"),
]
EMPLOYERS = [
    "Alibaba Cloud",
    "a logistics startup",
    "ByteDance",
    "a hospital",
    "Shopify",
    "Tencent",
    "a small design studio",
    "NetEase",
    "Ant Group",
    "a bank",
    "Stripe",
    "a robotics lab",
    "Meituan",
    "an insurance company",
]
EMPLOYERS_ZH = [
    "阿里云",
    "一家物流创业公司",
    "字节跳动",
    "市一医院",
    "腾讯",
    "网易",
    "蚂蚁集团",
    "一家银行",
    "美团",
    "一家保险公司",
    "一家设计工作室",
    "中国移动",
]
ALLERGENS = [
    ("peanuts", "花生"),
    ("shellfish", "虾蟹"),
    ("cats", "猫毛"),
    ("pollen", "花粉"),
    ("ibuprofen", "布洛芬"),
    ("mango", "芒果"),
    ("dust mites", "尘螨"),
    ("sulfa drugs", "磺胺类药物"),
    ("eggs", "鸡蛋"),
    ("latex", "乳胶"),
]
PETS = [
    ("cat", "猫"),
    ("dog", "狗"),
    ("corgi", "柯基"),
    ("parrot", "鹦鹉"),
    ("rabbit", "兔子"),
    ("golden retriever", "金毛"),
    ("hamster", "仓鼠"),
    ("tortoise", "乌龟"),
]
PET_NAMES = [
    ("Mochi", "麻薯"),
    ("Biscuit", "饼干"),
    ("Tofu", "豆腐"),
    ("Pepper", "胡椒"),
    ("Dumpling", "饺子"),
    ("Luna", "月亮"),
    ("Coco", "可可"),
    ("Mantou", "馒头"),
    ("Oreo", "奥利奥"),
    ("Pudding", "布丁"),
]
EDITORS = [
    "VS Code",
    "IntelliJ IDEA",
    "Emacs",
    "Sublime Text",
    "Zed",
    "Helix",
    "GoLand",
    "PyCharm",
    "Vim",
    "Cursor",
]
THEMES = [("light", "浅色"), ("dark", "深色"), ("high-contrast", "高对比度"), ("sepia", "护眼米黄")]
COLOR_SCHEMES = [
    "Solarized Light",
    "Dracula",
    "One Dark",
    "Catppuccin",
    "Nord",
    "Monokai",
    "GitHub Light",
    "Ayu Mirage",
    "Everforest",
]
DRINKS = [
    ("oat latte", "燕麦拿铁"),
    ("flat white", "澳白"),
    ("americano", "美式"),
    ("bubble tea", "奶茶"),
    ("jasmine tea", "茉莉花茶"),
    ("cold brew", "冷萃"),
    ("matcha latte", "抹茶拿铁"),
    ("hot chocolate", "热可可"),
    ("pu'er tea", "普洱"),
    ("sparkling water", "气泡水"),
]
FOODS = [
    ("cilantro", "葱花"),
    ("durian", "榴莲"),
    ("blue cheese", "蓝纹奶酪"),
    ("liver", "猪肝"),
    ("bitter melon", "苦瓜"),
    ("olives", "橄榄"),
    ("stinky tofu", "臭豆腐"),
    ("raw onion", "生洋葱"),
    ("celery", "芹菜"),
    ("lamb", "羊肉"),
]
DISHES = [
    ("hotpot", "火锅"),
    ("ramen", "拉面"),
    ("dim sum", "早茶点心"),
    ("Peking duck", "北京烤鸭"),
    ("tacos", "墨西哥卷饼"),
    ("pho", "越南河粉"),
    ("xiaolongbao", "小笼包"),
    ("Korean BBQ", "韩式烤肉"),
    ("beef noodle soup", "牛肉面"),
    ("sushi", "寿司"),
    ("margherita pizza", "玛格丽特披萨"),
]
RESTAURANTS = [
    ("Green Tea Restaurant", "绿茶餐厅"),
    ("Haidilao", "海底捞"),
    ("Din Tai Fung", "鼎泰丰"),
    ("Xibei", "西贝"),
    ("Grandma's Kitchen", "外婆家"),
    ("Little Sheep", "小肥羊"),
    ("Nanjing Impressions", "南京大牌档"),
    ("Lao Xiang Ji", "老乡鸡"),
]
LANGS = [
    "Rust",
    "Kotlin",
    "TypeScript",
    "Java",
    "C#",
    "Elixir",
    "Scala",
    "Ruby",
    "Swift",
    "Zig",
    "Python",
    "Go",
]
DBS = ["MySQL", "MongoDB", "SQLite", "ClickHouse", "TiDB", "Cassandra", "DynamoDB", "Redis", "PostgreSQL"]
CHANNELS = [
    ("WeChat", "微信"),
    ("Slack", "Slack"),
    ("Telegram", "Telegram"),
    ("email", "邮件"),
    ("DingTalk", "钉钉"),
    ("Signal", "Signal"),
    ("WhatsApp", "WhatsApp"),
    ("Lark", "飞书"),
]
TRAINS = ["G7311", "G7502", "G1234", "D3125", "G20", "G7601", "G1374", "D2281", "G7356", "G168"]
SPORTS = [
    ("plays badminton", "羽毛球"),
    ("plays tennis", "网球"),
    ("plays basketball", "篮球"),
    ("goes bouldering", "攀岩"),
    ("does yoga", "瑜伽"),
    ("plays table tennis", "乒乓球"),
    ("goes cycling", "骑行"),
    ("plays football", "足球"),
    ("goes hiking", "徒步"),
]
BOOKS = [
    "Project Hail Mary",
    "Dune",
    "The Left Hand of Darkness",
    "Educated",
    "Sapiens",
    "The Remains of the Day",
    "Klara and the Sun",
    "Designing Data-Intensive Applications",
    "The Pragmatic Programmer",
    "Normal People",
]
BOOKS_ZH = [
    "《活着》",
    "《平凡的世界》",
    "《围城》",
    "《白鹿原》",
    "《球状闪电》",
    "《长安的荔枝》",
    "《人类简史》",
    "《置身事内》",
    "《繁花》",
    "《许三观卖血记》",
]
PODCASTS = [
    "Lex Fridman",
    "Software Engineering Daily",
    "The Changelog",
    "Radiolab",
    "99% Invisible",
    "Acquired",
]
PODCASTS_ZH = ["《随机波动》", "《故事FM》", "《日谈公园》", "《声东击西》", "《不合时宜》", "《无人知晓》"]
GADGETS = [
    ("Kindle Paperwhite", "Kindle"),
    ("Sony WH-1000XM5 headphones", "索尼降噪耳机"),
    ("standing desk", "升降桌"),
    ("Steam Deck", "Steam Deck"),
    ("Fujifilm X100V", "富士相机"),
    ("robot vacuum", "扫地机器人"),
    ("DJI Mini 4 drone", "大疆无人机"),
    ("iPad Air", "iPad"),
    ("Breville espresso machine", "意式咖啡机"),
    ("air fryer", "空气炸锅"),
]
SERVICES = [
    "billing-service",
    "ledger-api",
    "settlement-gateway",
    "risk-engine",
    "payout-worker",
    "order-service",
    "ledger-service",
    "auth-service",
    "notification-hub",
    "report-exporter",
    "merchant-portal",
]
REPOS = [
    "the payments monorepo",
    "the mobile app repo",
    "the infra repo",
    "the design-system repo",
    "the data-pipeline repo",
    "the docs site",
    "the SDK repo",
]
HANDLES = [
    "alice_design",
    "carol_dev",
    "dave_ops",
    "erin_qa",
    "frank_sre",
    "grace_pm",
    "henry_fe",
    "ivy_data",
    "bob_ops2",
    "alice_devops",
    "jack_be",
    "kate_ml",
]
CHANGES = [
    "add retry backoff to the refund client",
    "drop the legacy CSV export",
    "fix a race in the batch scheduler",
    "pin the protobuf version",
    "add tracing spans to the checkout flow",
    "rename the settlement config keys",
    "switch the cache TTL to five minutes",
    "remove a dead feature flag",
    "paginate the merchant list API",
    "bump the Go toolchain in CI",
    "add a dark-mode toggle to the dashboard",
    "fix timezone handling in invoices",
]
CHANGES_ZH = [
    "给退款接口加了重试退避",
    "删掉了旧的导出功能",
    "修复了批处理调度的竞态问题",
    "给下单流程加了链路追踪",
    "把缓存过期时间改成五分钟",
    "给商户列表接口加了分页",
    "修复了发票里的时区问题",
    "重构了权限校验",
]
BUGS = [
    "the invoice PDF renders blank pages in Safari",
    "webhook retries double-post events",
    "the nightly export times out after 30 minutes",
    "login fails when the password contains an emoji",
    "the merchant dashboard shows yesterday's totals",
    "push notifications arrive twice on Android",
    "the search box ignores accents",
    "the report scheduler skips the last day of the month",
    "the API returns 500 on empty JSON bodies",
    "CSV import chokes on a UTF-8 BOM",
]
BUGS_ZH = [
    "导出报表在月底少了一天",
    "安卓端推送重复",
    "空请求体返回500",
    "导入CSV时BOM导致乱码",
    "商户后台显示的是昨天的数据",
    "夜间任务超时三十分钟",
    "登录页在低版本浏览器白屏",
    "发票金额四舍五入不一致",
]
SYMPTOMS = [
    "p99 latency jumped to 4 seconds",
    "the pods were OOM-killed every hour",
    "disk usage hit 100%",
    "a connection pool exhausted under load",
    "the consumer lag climbed past 500k messages",
    "TLS certificates expired over the weekend",
    "DNS lookups timed out intermittently",
    "the cron job ran twice after a leader election",
]
SYMPTOMS_ZH = [
    "接口延迟飙到四秒",
    "容器每小时被 OOM 杀掉一次",
    "磁盘写满",
    "连接池被打满",
    "证书周末过期了",
    "定时任务在主备切换后跑了两次",
    "消息积压到五十万条",
    "内存一直涨不回落",
]
CAUSES = [
    "an unbounded in-memory cache",
    "a missing index on created_at",
    "a log level left at DEBUG",
    "a retry storm from a misconfigured client",
    "clock skew between two nodes",
    "a leaked goroutine per request",
    "an N+1 query in the ORM",
    "a full disk on the log volume",
]
CAUSES_ZH = [
    "缓存没有设上限",
    "created_at 字段缺索引",
    "日志级别开成了 DEBUG",
    "客户端重试风暴",
    "两台机器时钟不同步",
    "每个请求泄漏一个协程",
    "ORM 的 N+1 查询",
    "日志盘满了",
]
TOOLS = [
    ("Node.js", ["18.19", "20.11", "22.2"]),
    ("Python", ["3.12", "3.11.9", "3.13"]),
    ("Kubernetes", ["1.28", "1.30", "1.27"]),
    ("Go", ["1.21", "1.23", "1.20"]),
    ("PostgreSQL", ["15", "17", "14.11"]),
    ("Terraform", ["1.7", "1.8.2"]),
    ("Java", ["17", "21"]),
]
CERTS = [
    "CKA",
    "AWS Developer Associate",
    "PMP",
    "CFA Level I",
    "IELTS",
    "JLPT N3",
    "GCP Professional Data Engineer",
]
MEETUPS = [
    "KubeCon",
    "PyCon China",
    "GopherChina",
    "a Rust meetup",
    "QCon",
    "the local JS meetup",
    "ArchSummit",
]
TOPICS = [
    "observability on a budget",
    "zero-downtime migrations",
    "rate limiting",
    "GraphQL federation",
    "feature flags",
    "event sourcing",
    "testing with containers",
    "SQLite in production",
]
TOPICS_ZH = ["可观测性", "零停机迁移", "限流设计", "事件溯源", "灰度发布", "混沌工程", "多活架构"]
LESSONS = [
    "write the rollback plan before the deploy plan",
    "alert on the age of the last backup, not the exit code",
    "keep database migrations backwards compatible for one release",
    "timebox debugging to an hour before asking",
    "pin every dependency in production images",
    "put an owner on every cron job",
    "load-test before Black Friday",
    "never share a staging database between teams",
    "tag releases from CI, never from a laptop",
]
LESSONS_ZH = [
    "发版前先写好回退方案",
    "定时任务一定要有负责人",
    "压测要在大促前两周做完",
    "生产镜像的依赖全部锁版本",
    "不同团队不要共用预发数据库",
    "排障超过一小时就找人一起看",
    "灰度先放百分之一的流量",
    "数据库变更要兼容上一个版本",
]
TENDENCIES = [
    "over-engineer the first version",
    "go quiet and work late",
    "ask for a meeting",
    "rewrite tests first",
    "write a long design doc",
    "take on too many tickets",
]
TIMEZONES = [
    "America/Toronto",
    "Europe/Berlin",
    "Asia/Singapore",
    "Europe/London",
    "America/Los_Angeles",
    "Australia/Melbourne",
]
MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
WEEKDAYS = [
    ("Monday", "周一"),
    ("Tuesday", "周二"),
    ("Wednesday", "周三"),
    ("Thursday", "周四"),
    ("Friday", "周五"),
    ("Saturday", "周六"),
    ("Sunday", "周日"),
]
HOSTS = [
    "db-prod-04.hz.internal",
    "db-prod-30.hz.internal",
    "db-prod-03.sh.internal",
    "db-prod-02.hz.internal",
    "cache-redis-02",
    "cache-redis-10",
    "kafka-prod-03",
    "backup-02",
    "es-prod-01.hz.internal",
    "db-staging-03.hz.internal",
    "mq-prod-01",
    "cache-redis-01b",
]
PR_NEAR = [343, 341, 3420, 3421, 234, 432, 1342, 34, 352, 442, 3242, 243, 344, 340]
ISSUE_NEAR = [1188, 1817, 11870, 1186, 1871, 1718, 118, 1177, 11780, 1179]
JIRA_NEAR = [4522, 4520, 4251, 45210, 4215, 4511, 4513, 5421, 4152, 4621]
VERSIONS_NEAR = ["2.3.2", "2.3.10", "2.4.1", "2.31.0", "3.2.1", "2.2.9", "2.3.11", "1.3.1", "2.13.1", "2.4.0"]
EXACT_IDS = ["PR #342", "JIRA-4521", "v2.3.1", "@alice_dev", "#1187", "db-prod-03.hz.internal"]


# --- users ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class User:
    id: str
    en: str  # how memories name the owner in English
    zh: str  # and in Chinese (a pronoun when the owner has no Chinese name)
    pronoun: str
    weight: float
    languages: tuple[float, float, float]  # en, zh, mixed
    self_share: float  # share of records about the owner himself/herself
    profile: dict[str, str]


USERS = [
    User("u-lin", "Lin", "林伟", "his", 0.50, (0.55, 0.35, 0.10), 0.0, {}),
    User("u-sam", "Sam", "他", "his", 0.14, (0.75, 0.15, 0.10), 0.0, {}),
    User(
        "u-mei",
        "Mei",
        "周梅",
        "her",
        0.14,
        (0.30, 0.60, 0.10),
        0.35,
        {
            "city": "Hangzhou",
            "city_zh": "杭州",
            "job": "product manager",
            "job_zh": "产品经理",
            "birthday": "March 14",
            "birthday_zh": "3月14日",
            "pet": "cat",
            "pet_zh": "猫",
            "petname": "Niangao",
            "petname_zh": "年糕",
        },
    ),
    User(
        "u-hao",
        "Hao",
        "陈浩",
        "his",
        0.11,
        (0.45, 0.45, 0.10),
        0.35,
        {
            "city": "Shanghai",
            "city_zh": "上海",
            "job": "backend engineer",
            "job_zh": "后端工程师",
            "birthday": "July 2",
            "birthday_zh": "7月2日",
            "pet": "dog",
            "pet_zh": "狗",
            "petname": "Doudou",
            "petname_zh": "豆豆",
        },
    ),
    User(
        "u-omar",
        "Omar",
        "他",
        "his",
        0.11,
        (0.85, 0.05, 0.10),
        0.35,
        {
            "city": "Ningbo",
            "city_zh": "宁波",
            "job": "data engineer",
            "job_zh": "数据工程师",
            "birthday": "November 3",
            "birthday_zh": "11月3日",
            "pet": "tortoise",
            "pet_zh": "乌龟",
            "petname": "Pebble",
            "petname_zh": "石头",
        },
    ),
]


@dataclass(frozen=True)
class Person:
    en: str
    zh: str | None
    rel_en: str
    rel_zh: str
    city: tuple[str, str]
    job: tuple[str, str]
    employer: str
    employer_zh: str
    month: int
    day: int


def make_cast(rng: random.Random, owner: User) -> list[Person]:
    # Lin's sister Lin Xiao and his friend Bob appear only in the hand-written ANCHORS (and the dialogues),
    # so no random fact (a wedding date, a city) can contradict them or answer a question about them.
    cast = []
    names = [n for n in EN_NAMES if not (owner.id == "u-lin" and n == "Bob")]
    people: list[tuple[str, str | None]] = [(n, None) for n in names] + [(en, zh) for en, zh in ZH_PEOPLE]
    rng.shuffle(people)
    for en, zh in people[:34]:
        rel_en, rel_zh = rng.choice(RELATIONS)
        emp = rng.randrange(len(EMPLOYERS_ZH))
        cast.append(
            Person(
                en,
                zh,
                rel_en,
                rel_zh,
                rng.choice(CITIES),
                rng.choice(JOBS),
                EMPLOYERS[emp],
                EMPLOYERS_ZH[emp],
                rng.randint(1, 12),
                rng.randint(1, 28),
            )
        )
    return cast


# --- templates --------------------------------------------------------------------------------------
# Each template: (category, scope, l0, l1). Slots are filled by `slots()`; `{Who}` is the subject (another
# person, or the owner for the extra users), `{owner}` the user whose memory it is.

T = tuple[str, str, str, str]

EN: list[T] = [
    ("profile", "user", "{Who} lives in {home}.", "Moved there in {year} for a job at {employer}."),
    ("profile", "user", "{Who} works as a {job} at {employer}.", ""),
    ("profile", "user", "{Name}'s birthday is {bday}.", "{owner} usually sends a card a few days early."),
    ("profile", "user", "{Who} is allergic to {allergen}.", "Carries antihistamines when eating out."),
    ("profile", "user", "{Who} has a {pet} named {petname}.", "Adopted in {year}."),
    ("profile", "user", "{Who} grew up in {city} before moving to {home}.", ""),
    ("profile", "user", "{Who} studied {major} and graduated in {year}.", ""),
    ("profile", "user", "{Who} drives an old {car} and refuses to replace it.", ""),
    ("profile", "user", "{Who} got married in {month} {year}; the ceremony was in {city}.", ""),
    ("profile", "user", "{Name} has two kids, aged {age} and {age2}.", ""),
    ("profile", "user", "{Who} is vegetarian and doesn't drink alcohol.", ""),
    (
        "profile",
        "user",
        "{Who} moved from {city} to {home} in {month} {year}.",
        "Still keeps a flat in {city} for visits.",
    ),
    ("profile", "user", "{Who} speaks {spoken} and is learning {spoken2}.", ""),
    ("profile", "user", "{Name} is the {job} everyone asks about {topic}.", ""),
    (
        "profile",
        "user",
        "{Who} uses a wheelchair; pick venues with step-free access when meeting {Name}.",
        "",
    ),
    ("preference", "user", "{Who} prefers {theme} mode in every app, {scheme} when available.", ""),
    ("preference", "user", "{Who} uses {editor} for everything and keeps recommending it.", ""),
    (
        "preference",
        "user",
        "{Who} drinks a {drink} every morning.",
        "Usually from the kiosk by the {landmark}.",
    ),
    ("preference", "user", "{Who} can't stand {food}.", "Remember this when ordering for the group."),
    ("preference", "user", "{Name}'s favourite restaurant is {restaurant} in {city}.", ""),
    ("preference", "user", "{Who} prefers {lang} over {lang2} for backend work.", ""),
    ("preference", "user", "{Who} wants to be reached on {channel}, never by phone.", ""),
    ("preference", "user", "{Who} always books the window seat on long flights.", ""),
    ("preference", "user", "{Who} takes the {train} train to {city} rather than flying.", ""),
    ("preference", "user", "{Who} reads mostly {genre} and lent {owner} a copy of {book}.", ""),
    ("preference", "user", "{Who} prefers {db} to {db2} and says so in every design review.", ""),
    ("preference", "user", "{Who} likes meetings before {hour} and blocks the afternoons.", ""),
    ("preference", "user", "{Who} listens to the {podcast} podcast while commuting.", ""),
    ("preference", "user", "{Who} {sport} every {weekday} evening.", ""),
    ("preference", "user", "{Who} insists on tabs over spaces, even in YAML.", ""),
    ("preference", "user", "{Name} likes {dish} more than anything; {restaurant} is the usual spot.", ""),
    ("preference", "user", "{Who} prefers e-books to paper and reads on a Kindle.", ""),
    ("preference", "user", "{Who} hates video calls and asks for audio only.", ""),
    ("preference", "user", "{Who} likes a {scheme} colour scheme in the terminal.", ""),
    ("preference", "user", "{Who} prefers aisle seats in cinemas and late showings.", ""),
    ("preference", "user", "{Name} only drinks decaf after {hour}.", ""),
    (
        "event",
        "user",
        "{Who} opened PR #{pr} in {repo} to {change}.",
        "Reviewed by @{handle}; merged on {iso}.",
    ),
    ("event", "user", "{Who} released {service} v{ver} on {iso}.", ""),
    ("event", "user", "{Who} filed issue #{issue}: {bug}.", ""),
    ("event", "user", "{Who} is on call the week of {date}.", "Swap requests go through @{handle}."),
    ("event", "user", "{Who} flew to {city} on {date} for a conference.", ""),
    (
        "event",
        "user",
        "{Who} booked train {train} from {city} to {city2} on {date}.",
        "Seat 0{age}F, second class.",
    ),
    (
        "event",
        "user",
        "{Name}'s wedding is on {date} in {city}.",
        "{owner} is invited; dress code is smart casual.",
    ),
    ("event", "user", "{Who} started a new job at {employer} in {month}.", ""),
    ("event", "user", "{Who} finished the {city} marathon in {hh}:{mm}.", ""),
    ("event", "user", "{Who} moved the {service} database to {host} in the {month} maintenance window.", ""),
    ("event", "user", "JIRA-{jira} ({Name}): {bug}.", "Assigned to @{handle}."),
    ("event", "user", "{Who} upgraded the team's {tool} to {toolver}.", ""),
    ("event", "user", "{Who} gave a talk on {topic} at {meetup} in {month}.", ""),
    ("event", "user", "{Who} passed the {cert} exam in {month} {year}.", ""),
    ("event", "user", "{Who} had knee surgery on {date} and is off for two weeks.", ""),
    ("event", "user", "{Who} bought {a_gadget} for about {price} RMB.", ""),
    (
        "event",
        "user",
        "{Who} is visiting {city} from {date} to {date2}.",
        "Needs a hotel near the {landmark}.",
    ),
    ("event", "user", "{Who} hosted a dinner at {restaurant} on {date}.", ""),
    ("event", "user", "{Name}'s team rolled back {service} v{ver} after {symptom}.", ""),
    ("event", "user", "{Who} got promoted to senior {job} in {month}.", ""),
    ("event", "user", "{Who} is moving to {city} next {month}.", "The lease in {home} ends on {date}."),
    ("event", "user", "{Who} had a baby girl on {date}.", "{owner} sent a red envelope."),
    ("event", "user", "{Who} borrowed {owner}'s {gadget} and still hasn't returned it.", ""),
    ("event", "user", "{Who} tagged {service} v{ver} and deployed it to staging.", ""),
    ("case", "user", "{Who} debugged {symptom} in {service}; the cause was {cause}.", ""),
    ("case", "user", "Incident on {host}, handled by {Name}: {symptom}.", "Root cause: {cause}."),
    ("case", "user", "{Name}'s deploy of {service} v{ver} failed because of {cause}.", ""),
    ("case", "user", "{Who} traced a memory leak in {service} to {cause}.", ""),
    ("case", "user", "{Who} fixed a flaky test in {service} that failed only under {condition}.", ""),
    ("case", "user", "{Name}'s laptop died the night before a demo; restored from a {backup} backup.", ""),
    ("case", "user", "{Who} spent {age} days chasing {symptom} on {host}.", "It turned out to be {cause}."),
    ("lesson", "user", "{Who} learned to {lesson} after an outage in {month}.", ""),
    ("lesson", "user", "Lesson from {Name}'s team: {lesson}.", ""),
    ("lesson", "user", "{Who} says never to deploy on a {weekday} night.", ""),
    ("lesson", "user", "{Who} insists every release has {practice}.", ""),
    ("lesson", "user", "After the {service} incident, {Name} always checks {check} first.", ""),
    ("insight", "user", "{Who} tends to {tendency} when a deadline slips.", ""),
    ("insight", "user", "{Who} is most productive {when}.", ""),
    ("insight", "user", "{Who} answers faster on {channel} than by email.", ""),
    ("insight", "user", "{Name} gets short-tempered before lunch; better to ask after {hour}.", ""),
    ("insight", "user", "{Who} takes feedback better in writing than in a meeting.", ""),
    ("lesson", "agent", "When drafting messages to {Name}, use {channel}; {Name} rarely reads email.", ""),
    ("lesson", "agent", "When {owner} asks about {Name}'s flights, quote times in {tz}.", ""),
    ("lesson", "agent", "{Name} prefers to be called {nick}; use that in drafts to {Name}.", ""),
    ("lesson", "agent", "Remind {owner} a week before {Name}'s birthday ({bday}).", ""),
    (
        "case",
        "agent",
        "Suggested {restaurant} for dinner with {Name}, but {Name} is allergic to {allergen}; pick another place.",
        "",
    ),
    (
        "insight",
        "agent",
        "{owner} forwards {Name}'s questions about {topic}; answer them for {Name}, not for {owner}.",
        "",
    ),
    (
        "lesson",
        "agent",
        "Gift ideas for {Name}: {gadget} or a book like {book}; avoid anything with {food}.",
        "",
    ),
    ("lesson", "agent", "{Name}'s calendar is in {tz}; convert before proposing a call.", ""),
]

ZH: list[T] = [
    ("profile", "user", "{who}住在{home_zh}。", "{year}年搬过去的，在{employer_zh}上班。"),
    ("profile", "user", "{who}是{employer_zh}的{job_zh}。", ""),
    ("profile", "user", "{who}是{bday_zh}出生的。", ""),
    ("profile", "user", "{who}对{allergen_zh}过敏，聚餐时要注意。", ""),
    ("profile", "user", "{who}养了一只{pet_zh}，叫{petname_zh}。", "{year}年领养的。"),
    ("profile", "user", "{who}老家在{city_zh}，后来去了{home_zh}工作。", ""),
    ("profile", "user", "{who}{year}年结的婚，婚礼在{city_zh}办的。", ""),
    ("profile", "user", "{who}家有两个孩子，一个{age}岁，一个{age2}岁。", ""),
    ("profile", "user", "{who}吃素，也不喝酒。", ""),
    ("profile", "user", "{who}{month_zh}从{city_zh}搬到了{home_zh}。", "原来的房子还没退租。"),
    ("profile", "user", "{who}的老婆是{job_zh}，在{city_zh}上班。", ""),
    ("profile", "user", "{who}身体不太好，去年做过一次心脏支架手术。", ""),
    ("profile", "user", "{who}是{city_zh}人，说话带口音。", ""),
    ("profile", "user", "{who}今年{age3}岁，比{owner_zh}大几岁。", ""),
    ("preference", "user", "{who}所有软件都用{theme_zh}模式。", ""),
    ("preference", "user", "{who}每天早上一杯{drink_zh}。", ""),
    ("preference", "user", "{who}最受不了{food_zh}，点菜时别点。", ""),
    ("preference", "user", "{who}最喜欢的餐厅是{city_zh}的{restaurant_zh}。", ""),
    ("preference", "user", "{who}只用{channel_zh}联系，不接电话。", ""),
    ("preference", "user", "{who}出差喜欢坐高铁，常坐{train}次。", ""),
    ("preference", "user", "{who}喜欢看书，推荐过{book_zh}。", ""),
    ("preference", "user", "{who}喜欢{sport_zh}，每个{weekday_zh}晚上都去。", ""),
    ("preference", "user", "{who}最爱吃{dish_zh}。", ""),
    ("preference", "user", "{who}开会只约上午，下午要专心干活。", ""),
    ("preference", "user", "{who}通勤时听{podcast_zh}。", ""),
    ("preference", "user", "{who}不喜欢视频会议，只开语音。", ""),
    ("preference", "user", "{who}喝茶只喝{drink_zh}，不加糖。", ""),
    ("preference", "user", "{who}坐飞机一定要靠窗的位置。", ""),
    ("preference", "user", "{who}周末喜欢去{city_zh}周边爬山。", ""),
    ("preference", "user", "{who}看电影只看晚场，喜欢坐最后一排。", ""),
    ("preference", "user", "{who}讨厌开长会，超过半小时就坐不住。", ""),
    ("preference", "user", "{who}喜欢吃辣，每周都要吃一次{dish_zh}。", ""),
    ("preference", "user", "{who}买东西只在实体店买，不爱网购。", ""),
    ("preference", "user", "{who}睡前一定要看半小时书。", ""),
    ("event", "user", "{who}{date_zh}去{city_zh}出差。", "住在{landmark_zh}附近的酒店。"),
    ("event", "user", "{who}买了{date_zh}的{train}次高铁，从{city_zh}到{city2_zh}。", ""),
    ("event", "user", "{who}的婚礼定在{date_zh}，在{city_zh}。", "{owner_zh}要去当伴郎。"),
    ("event", "user", "{who}{month_zh}跳槽去了{employer_zh}。", ""),
    ("event", "user", "{who}{date_zh}做了膝盖手术，要休两周。", ""),
    ("event", "user", "{who}刚生了个女儿，{date_zh}出生的。", ""),
    ("event", "user", "{who}这周值班，有事找他。", ""),
    ("event", "user", "{who}{date_zh}请大家在{restaurant_zh}吃饭。", ""),
    ("event", "user", "{who}下个月搬到{city_zh}。", "房租合同{date_zh}到期。"),
    ("event", "user", "{who}升职了，现在是高级{job_zh}。", ""),
    ("event", "user", "{who}借了{owner_zh}的{gadget_zh}，还没还。", ""),
    ("event", "user", "{who}{date_zh}来{city_zh}玩，要找住的地方。", ""),
    ("event", "user", "{who}考过了{cert}，准备明年再考一个。", ""),
    ("event", "user", "{who}在{meetup_zh}上讲了{topic_zh}。", ""),
    ("event", "user", "{who}的猫走丢了三天，后来在楼下找到了。", ""),
    ("event", "user", "{who}{date_zh}要体检，前一天不能吃东西。", ""),
    ("event", "user", "{who}的孩子{date_zh}开家长会。", ""),
    ("event", "user", "{who}买了一台{gadget_zh}，花了{price}块。", ""),
    ("event", "user", "{who}{month_zh}去{city_zh}度蜜月。", ""),
    ("event", "user", "{who}考驾照科目二挂了，下周补考。", ""),
    ("event", "user", "{who}说{date_zh}要来家里吃饭。", ""),
    ("event", "user", "{who}装修新房，{month_zh}入住。", ""),
    ("event", "user", "{who}报了{city_zh}马拉松的全程。", ""),
    ("event", "user", "{who}{date_zh}生病住院了，大家凑钱买了水果。", ""),
    ("case", "user", "{who}排查了{symptom_zh}的问题，原因是{cause_zh}。", ""),
    ("case", "user", "{who}负责的系统出了故障：{symptom_zh}。", "最后发现是{cause_zh}。"),
    ("case", "user", "{who}的电脑硬盘坏了，数据差点没救回来。", "幸好有{backup_zh}的备份。"),
    ("case", "user", "{who}查了三天的偶发问题，其实是{cause_zh}。", ""),
    ("case", "user", "{who}装修被坑了，合同里没写清楚工期。", ""),
    ("case", "user", "{who}的信用卡被盗刷了两千多，银行已经冻结。", ""),
    ("lesson", "user", "{who}说：{lesson_zh}。", ""),
    ("lesson", "user", "{who}团队的教训是{lesson_zh}。", ""),
    ("lesson", "user", "{who}吃过亏，现在租房一定先看合同。", ""),
    ("lesson", "user", "{who}上次{weekday_zh}晚上发布出了事，之后再也不在{weekday_zh}发了。", ""),
    ("lesson", "user", "{who}认为带孩子出门一定要多带一套衣服。", ""),
    ("insight", "user", "{who}一着急就容易{tendency_zh}。", ""),
    ("insight", "user", "{who}晚上效率最高，白天经常走神。", ""),
    ("insight", "user", "{who}回{channel_zh}比回邮件快得多。", ""),
    ("insight", "user", "{who}不太会拒绝别人，手上的活总是太多。", ""),
    ("insight", "user", "{who}对数字很敏感，报销单一眼就能看出错。", ""),
    ("insight", "user", "{who}在会上不爱发言，会后私下说想法。", ""),
    ("lesson", "agent", "给{who}发消息用{channel_zh}，他基本不看邮件。", ""),
    ("lesson", "agent", "提醒{owner_zh}：{who}{bday_zh}出生，提前一周准备礼物。", ""),
    ("lesson", "agent", "帮{owner_zh}约{who}吃饭时，别选有{food_zh}的菜。", ""),
    ("insight", "agent", "{owner_zh}转来的{topic_zh}问题其实是{who}问的，回答要针对{who}的情况。", ""),
    ("lesson", "agent", "{who}叫{nick_zh}就行，起草消息时别用全名。", ""),
    ("case", "agent", "之前推荐{restaurant_zh}给{who}，结果{who}对{allergen_zh}过敏，下次换一家。", ""),
    ("lesson", "agent", "{who}在国外，约时间要换算成当地时间。", ""),
    ("insight", "agent", "{owner_zh}说起{who}时常用外号{nick_zh}。", ""),
]

MIXED: list[T] = [
    ("event", "user", "{who}提了 PR #{pr}，{change_zh}。", "@{handle} review 完当天就 merge 了。"),
    ("event", "user", "{who}发布了 {service} v{ver}。", "上线时间是{date_zh}。"),
    ("event", "user", "{who}在 JIRA-{jira} 里报了一个 bug：{bug_zh}。", ""),
    ("event", "user", "{who}把 {service} 的数据库迁到了 {host}。", ""),
    ("event", "user", "{who}负责的 issue #{issue} 终于关了。", "问题是{bug_zh}。"),
    ("preference", "user", "{who}写代码用 {editor}，主题是 {scheme}。", ""),
    ("preference", "user", "{who}更喜欢 {lang}，觉得 {lang2} 太啰嗦。", ""),
    ("preference", "user", "{who}数据库只用 {db}。", ""),
    ("preference", "user", "{who}的 IDE 全部开 {theme_zh}主题。", "用的是 {scheme}。"),
    ("preference", "user", "{who}每天早上一杯 {drink}，从不换口味。", ""),
    ("case", "user", "{who}遇到 {service} 的 {symptom_zh}，最后发现是 {cause}。", ""),
    ("case", "user", "{host} 上的故障是{who}处理的：{symptom_zh}。", ""),
    ("event", "user", "{who}把团队的 {tool} 升到了 {toolver}。", ""),
    ("event", "user", "{who}在 {meetup} 上分享了{topic_zh}。", ""),
    ("event", "user", "{who}拿到了 {cert} 证书。", ""),
    ("lesson", "user", "{who}的经验：{lesson_zh}，尤其是 {service} 这种核心服务。", ""),
    ("insight", "user", "{who}写 design doc 很快，但 code review 拖得很久。", ""),
    ("event", "user", "{who}买了 {gadget}，说很好用。", ""),
    ("preference", "user", "{who}用 {channel} 联系，不喜欢打电话。", ""),
    ("event", "user", "{who}的 on-call 排在{date_zh}那一周。", ""),
    ("event", "user", "{who}订了 {date_zh} 的 {train} 去{city_zh}。", ""),
    ("preference", "user", "{who}听 {podcast} 学英语。", ""),
    ("event", "user", "{who}在 {repo_short} 仓库里 revert 了 v{ver} 的改动。", ""),
    ("lesson", "agent", "{who}的时区是 {tz}，约会议要换算。", ""),
    ("case", "user", "{who}的 {service} 在{date_zh}出现 OOM，原因是{cause_zh}。", ""),
    ("event", "user", "{who}给 {service} 加了 feature flag，叫 {flag}。", ""),
    ("insight", "user", "{who}对 Kubernetes 很熟，遇到集群问题可以问他。", ""),
    ("preference", "user", "{who}喜欢{sport_zh}，周末常去 {city} 打比赛。", ""),
    ("event", "user", "{who}推荐了一本书 {book}。", ""),
    ("profile", "user", "{who}在 {employer} 做 {job}。", ""),
]

MAJORS = [
    "economics",
    "mechanical engineering",
    "biology",
    "journalism",
    "mathematics",
    "architecture",
    "law",
]
CARS = [
    "Volkswagen Golf",
    "Toyota Corolla",
    "Honda Fit",
    "Mazda 3",
    "Tesla Model 3",
    "Volvo XC60",
    "Li Auto L7",
]
SPOKEN = ["Cantonese", "Spanish", "German", "Hindi", "French", "Korean", "Japanese", "Portuguese"]
GENRES = ["crime novels", "history", "fantasy", "poetry", "biographies", "manga"]
LANDMARKS = [
    ("train station", "火车站"),
    ("river", "江边"),
    ("old town", "老城区"),
    ("airport", "机场"),
    ("university", "大学城"),
    ("convention centre", "会展中心"),
]
CONDITIONS = [
    "the race detector",
    "a cold cache",
    "daylight saving time",
    "parallel test runs",
    "a slow CI runner",
]
BACKUPS = ["Time Machine", "cloud", "weekly"]
BACKUPS_ZH = ["云盘", "移动硬盘", "公司 NAS"]
PRACTICES = ["a written rollback plan", "a canary stage", "a changelog entry", "two reviewers"]
CHECKS = ["the connection pool metrics", "disk space", "the error budget", "the queue depth"]
WHEN = ["late at night", "before 9am", "on Fridays when nobody schedules meetings", "right after the gym"]
NICKS = [("Bobby", "大刘"), ("Doc", "老大"), ("Kiki", "阿琪"), ("Teddy", "胖子"), ("Rosie", "小胖")]
TENDENCIES_ZH = ["把需求想得太复杂", "熬夜加班", "拉大家开会", "先重写测试", "话变少"]
MEETUPS_ZH = ["GopherChina 大会", "技术沙龙", "公司年会", "QCon 大会", "社区分享会"]
FLAGS = ["new_refund_flow_v2", "refund_flow_new", "new_checkout_flow", "fast_settlement", "legacy_export_off"]
REPOS_SHORT = ["payments", "mobile-app", "infra", "design-system", "sdk"]


def slots(
    rng: random.Random, owner: User, cast: list[Person], language: str, can_be_self: bool
) -> dict[str, str]:
    """Everything a template may ask for. The subject is drawn from the cast (or is the owner)."""
    about_self = rng.random() < owner.self_share and can_be_self
    pool = [p for p in cast if p.zh] if language == "zh" else cast  # Chinese-only text needs a Chinese name
    person = rng.choice(pool)
    c = person.city
    city, city2 = rng.sample(CITIES, 2)
    if owner.id in ("u-lin", "u-sam"):
        city = city if city[0] != c[0] else city2
    poss = {
        "u-lin": ["Lin's", "His", "The user's", "User's", "Lin's"],
        "u-sam": ["Sam's", "His", "The user's"],
    }
    owner_poss = rng.choice(poss.get(owner.id, [f"{owner.en}'s", f"{owner.pronoun.capitalize()}"]))
    who_en = f"{owner_poss} {person.rel_en} {person.en}"
    zh_name = person.zh or person.en
    who_zh = rng.choice([f"{person.rel_zh}{zh_name}", f"{owner.zh}的{person.rel_zh}{zh_name}", f"{zh_name}"])
    if owner.id == "u-sam":
        who_zh = rng.choice([f"{person.rel_zh}{zh_name}", f"{zh_name}"])
    home, home_zh = c
    job, job_zh = person.job
    employer, employer_zh = person.employer, person.employer_zh
    bday = f"{MONTHS[person.month - 1]} {person.day}"
    bday_zh = f"{person.month}月{person.day}日"
    name = person.en
    if about_self:
        p = owner.profile
        who_en = name = owner.en
        who_zh = owner.zh if owner.zh not in ("他", "她") else owner.en
        home, home_zh, job, job_zh = p["city"], p["city_zh"], p["job"], p["job_zh"]
        bday, bday_zh = p["birthday"], p["birthday_zh"]
    month = rng.randrange(12)
    day = rng.randint(1, 28)
    year = rng.choice([2016, 2018, 2019, 2020, 2021, 2022, 2023, 2024, 2025])
    date_year = rng.choice([2024, 2025, 2025, 2026])
    pet, pet_zh = rng.choice(PETS)
    petname, petname_zh = rng.choice(PET_NAMES)
    if about_self:
        pet, pet_zh, petname, petname_zh = (
            owner.profile[k] for k in ("pet", "pet_zh", "petname", "petname_zh")
        )
    allergen, allergen_zh = rng.choice(ALLERGENS)
    theme, theme_zh = rng.choice(THEMES)
    drink, drink_zh = rng.choice(DRINKS)
    food, food_zh = rng.choice(FOODS)
    dish, dish_zh = rng.choice(DISHES)
    restaurant, restaurant_zh = rng.choice(RESTAURANTS)
    lang, lang2 = rng.sample(LANGS, 2)
    db, db2 = rng.sample(DBS, 2)
    channel, channel_zh = rng.choice(CHANNELS)
    sport, sport_zh = rng.choice(SPORTS)
    weekday, weekday_zh = rng.choice(WEEKDAYS)
    gadget, gadget_zh = rng.choice(GADGETS)
    landmark, landmark_zh = rng.choice(LANDMARKS)
    tool, versions = rng.choice(TOOLS)
    nick, nick_zh = rng.choice(NICKS)
    exact = owner.id not in ("u-lin", "u-sam") and rng.random() < 0.25
    pr = 342 if exact and rng.random() < 0.5 else rng.choice(PR_NEAR + [rng.randint(100, 4999)])
    jira = 4521 if exact and rng.random() < 0.5 else rng.choice(JIRA_NEAR + [rng.randint(1000, 9999)])
    ver = "2.3.1" if exact and rng.random() < 0.5 else rng.choice(VERSIONS_NEAR)
    issue = 1187 if exact and rng.random() < 0.5 else rng.choice(ISSUE_NEAR + [rng.randint(200, 3000)])
    host = "db-prod-03.hz.internal" if exact and rng.random() < 0.3 else rng.choice(HOSTS)
    handle = "alice_dev" if exact and rng.random() < 0.3 else rng.choice(HANDLES)
    date2_day = min(day + rng.randint(2, 6), 28)
    return {
        "Who": who_en,
        "Name": name,
        "who": who_zh,
        "owner": owner.en,
        "owner_zh": owner.zh if owner.zh not in ("他", "她") else ("他" if owner.pronoun == "his" else "她"),
        "home": home,
        "home_zh": home_zh,
        "city": city[0],
        "city_zh": city[1],
        "city2": city2[0],
        "city2_zh": city2[1],
        "job": job,
        "job_zh": job_zh,
        "employer": employer,
        "employer_zh": employer_zh,
        "bday": bday,
        "bday_zh": bday_zh,
        "year": str(year),
        "month": MONTHS[month],
        "month_zh": f"{month + 1}月",
        "date": f"{MONTHS[month]} {day}",
        "date2": f"{MONTHS[month]} {date2_day}",
        "date_zh": f"{month + 1}月{day}日",
        "iso": f"{date_year}-{month + 1:02d}-{day:02d}",
        "allergen": allergen,
        "allergen_zh": allergen_zh,
        "pet": pet,
        "pet_zh": pet_zh,
        "petname": petname,
        "petname_zh": petname_zh,
        "major": rng.choice(MAJORS),
        "car": rng.choice(CARS),
        "age": str(rng.randint(2, 9)),
        "age2": str(rng.randint(10, 15)),
        "age3": str(rng.randint(38, 45)),
        "spoken": rng.choice(SPOKEN),
        "spoken2": rng.choice(SPOKEN[::-1]),
        "topic": rng.choice(TOPICS),
        "topic_zh": rng.choice(TOPICS_ZH),
        "theme": theme,
        "theme_zh": theme_zh,
        "scheme": rng.choice(COLOR_SCHEMES),
        "editor": rng.choice(EDITORS),
        "drink": drink,
        "drink_zh": drink_zh,
        "food": food,
        "food_zh": food_zh,
        "dish": dish,
        "dish_zh": dish_zh,
        "restaurant": restaurant,
        "restaurant_zh": restaurant_zh,
        "lang": lang,
        "lang2": lang2,
        "db": db,
        "db2": db2,
        "channel": channel,
        "channel_zh": channel_zh,
        "train": rng.choice(TRAINS),
        "genre": rng.choice(GENRES),
        "book": rng.choice(BOOKS),
        "book_zh": rng.choice(BOOKS_ZH),
        "hour": rng.choice(["10am", "11am", "2pm", "4pm"]),
        "podcast": rng.choice(PODCASTS),
        "podcast_zh": rng.choice(PODCASTS_ZH),
        "sport": sport,
        "sport_zh": sport_zh,
        "weekday": weekday,
        "weekday_zh": weekday_zh,
        "pr": str(pr),
        "issue": str(issue),
        "jira": str(jira),
        "ver": ver,
        "host": host,
        "handle": handle,
        "repo": rng.choice(REPOS),
        "repo_short": rng.choice(REPOS_SHORT),
        "change": rng.choice(CHANGES),
        "change_zh": rng.choice(CHANGES_ZH),
        "service": rng.choice(SERVICES),
        "bug": rng.choice(BUGS),
        "bug_zh": rng.choice(BUGS_ZH),
        "symptom": rng.choice(SYMPTOMS),
        "symptom_zh": rng.choice(SYMPTOMS_ZH),
        "cause": rng.choice(CAUSES),
        "cause_zh": rng.choice(CAUSES_ZH),
        "tool": tool,
        "toolver": rng.choice(versions),
        "cert": rng.choice(CERTS),
        "meetup": rng.choice(MEETUPS),
        "meetup_zh": rng.choice(MEETUPS_ZH),
        "gadget": gadget,
        "a_gadget": ("an " if gadget[0] in "AEIOUaeiou" else "a ") + gadget,
        "gadget_zh": gadget_zh,
        "price": str(rng.randrange(3, 90) * 100),
        "landmark": landmark,
        "landmark_zh": landmark_zh,
        "hh": str(rng.randint(3, 5)),
        "mm": f"{rng.randrange(60):02d}",
        "condition": rng.choice(CONDITIONS),
        "backup": rng.choice(BACKUPS),
        "backup_zh": rng.choice(BACKUPS_ZH),
        "lesson": rng.choice(LESSONS),
        "lesson_zh": rng.choice(LESSONS_ZH),
        "practice": rng.choice(PRACTICES),
        "check": rng.choice(CHECKS),
        "tendency": rng.choice(TENDENCIES),
        "tendency_zh": rng.choice(TENDENCIES_ZH),
        "when": rng.choice(WHEN),
        "tz": rng.choice(TIMEZONES),
        "nick": nick,
        "nick_zh": nick_zh,
        "flag": rng.choice(FLAGS),
    }


# Hand-written anchors (d-0001...): the other person's fact that each `other-person` query must not return.
ANCHORS: list[tuple[str, str, str, str]] = [
    (
        "u-lin",
        "profile",
        "User's friend Bob lives in Toronto.",
        "Moved there in 2019 and works as an SRE at Shopify.",
    ),
    ("u-lin", "profile", "同事王浩住在滨江区，租的房子离公司骑车十分钟。", ""),
    (
        "u-lin",
        "profile",
        "Lin's sister Lin Xiao was born on October 8.",
        "She lives in Shenzhen and works as a UX designer at Tencent.",
    ),
    ("u-lin", "profile", "妹妹林晓是10月8日出生的，今年想去冰岛过。", ""),
    (
        "u-lin",
        "profile",
        "Lin's friend Bob is allergic to penicillin.",
        "Found out after a bad reaction in 2020.",
    ),
    ("u-lin", "profile", "同事小王对青霉素过敏，上次打针还进了急诊。", ""),
    (
        "u-lin",
        "preference",
        "His friend Priya uses dark mode in every app, Dracula when it is available.",
        "",
    ),
    (
        "u-lin",
        "preference",
        "Colleague Xiao Wang drinks a large americano every morning.",
        "Buys it at the cafe downstairs.",
    ),
    ("u-lin", "preference", "同事小王每天早上一杯美式，下午再来一杯拿铁。", ""),
    ("u-lin", "profile", "His friend Bob drives an old Tesla Model 3 and refuses to replace it.", ""),
    ("u-lin", "profile", "Lin's neighbour Wang Hao has a grey cat named Mochi.", ""),
    ("u-lin", "profile", "朋友阿杰在蚂蚁集团做支付，是高级后端工程师。", ""),
    ("u-lin", "profile", "His colleague Marcus's wife is a middle-school English teacher.", ""),
    ("u-lin", "profile", "同事王浩的老婆是中学语文老师。", ""),
    (
        "u-lin",
        "preference",
        "His colleague Priya takes the G7502 train home to Suzhou every other weekend.",
        "",
    ),
    ("u-lin", "profile", "同事王浩的儿子在滨江的一所幼儿园上学，今年四岁。", ""),
    (
        "u-lin",
        "event",
        "Lin's teammate Priya opened PR #3420 adding idempotency keys to the refund API.",
        "Reviewed by @carol_dev.",
    ),
    (
        "u-lin",
        "event",
        "His colleague Marcus released ledger-service v2.3.2 with a fix for refund rounding.",
        "",
    ),
    ("u-lin", "event", "Lin's friend Bob signed up for the Toronto Waterfront half marathon in October.", ""),
    (
        "u-lin",
        "preference",
        "His old classmate Zhao Lei loves Java and thinks Spring Boot is the best framework.",
        "",
    ),
    ("u-lin", "preference", "同事小王用 VS Code，开浅色主题。", ""),
    ("u-lin", "event", "妹妹林晓的护照明年三月到期，要赶紧去换。", ""),
    ("u-lin", "profile", "His friend Bob's parents live in Vancouver.", ""),
    ("u-lin", "preference", "Lin's friend Bob prefers light themes and finds dark editors hard to read.", ""),
    ("u-lin", "preference", "妹妹林晓不吃葱花，点外卖要备注。", ""),
    ("u-lin", "profile", "Lin's sister Lin Xiao lives in Shenzhen with her fiancé Kevin.", ""),
]


# --- rules ------------------------------------------------------------------------------------------


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def forbidden_rules(queries: list[dict[str, Any]]) -> dict[str, list[Callable[[str], bool]]]:
    """Per user: predicates that make a text a (literal) correct answer of one of that user's queries."""
    rules: dict[str, list[Callable[[str], bool]]] = {}
    for q in queries:
        user_rules = rules.setdefault(q["userId"], [])
        text = q["query"]
        if q["kind"] == "identifier":
            user_rules.append(identifier_pattern(text).search)  # type: ignore[arg-type]
        elif q["kind"] == "zh-2char":

            def has_word(t: str, w: str = text) -> bool:
                return w in t

            user_rules.append(has_word)
        elif q["kind"] == "keyword":
            words = tuple(w.lower() for w in text.split())

            def has_all(t: str, ws: tuple[str, ...] = words) -> bool:
                return all(w in t.lower() for w in ws)

            user_rules.append(has_all)
    return rules


def is_forbidden(text: str, user_id: str, rules: dict[str, list[Callable[[str], bool]]]) -> bool:
    if user_id in ("u-lin", "u-sam") and re.search(r"\b(Lin Wei|林伟(?!的))", text):
        return True  # never a sentence whose subject could be the user himself
    return any(rule(text) for rule in rules.get(user_id, []))


def generate(count: int = COUNT, seed: int = SEED) -> list[dict[str, str]]:
    queries = load_jsonl(EVAL_DIR / "queries.jsonl")
    rules = forbidden_rules(queries)
    casts = {u.id: make_cast(random.Random(f"{seed}:cast:{u.id}"), u) for u in USERS}
    pools = {"en": EN, "zh": ZH, "mixed": MIXED}
    records = [
        {"id": f"d-{n:04d}", "userId": user, "scope": "user", "category": category, "l0": l0, "l1": l1}
        for n, (user, category, l0, l1) in enumerate(ANCHORS, start=1)
    ]
    for record in records:
        assert not is_forbidden(f"{record['l0']} {record['l1']}", record["userId"], rules), record
    seen = {r["l0"] for r in records}
    for index in range(len(ANCHORS) + 1, count + 1):
        for attempt in range(200):
            rng = random.Random(f"{seed}:{index}:{attempt}")
            owner = rng.choices(USERS, weights=[u.weight for u in USERS])[0]
            language = rng.choices(["en", "zh", "mixed"], weights=owner.languages)[0]
            category, scope, l0_t, l1_t = rng.choice(pools[language])
            can_be_self = "{owner" not in l0_t + l1_t and scope == "user"
            values = slots(rng, owner, casts[owner.id], language, can_be_self)
            l0 = l0_t.format(**values)
            l1 = l1_t.format(**values) if l1_t and rng.random() < 0.6 else ""
            text = f"{l0} {l1}"
            if l0 in seen or script_of(text) != language or is_forbidden(text, owner.id, rules):
                continue
            seen.add(l0)
            records.append(
                {
                    "id": f"d-{index:04d}",
                    "userId": owner.id,
                    "scope": scope,
                    "category": category,
                    "l0": l0,
                    "l1": l1,
                }
            )
            break
        else:  # pragma: no cover - would mean the rules exclude nearly everything
            raise RuntimeError(f"could not draw distractor {index}")
    return records


def render(records: list[dict[str, str]]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.out.write_text(render(generate()), encoding="utf-8")


if __name__ == "__main__":
    main()
