"""Stopword lists for query analysis (English after casefolding, Chinese as jieba emits them).

Kept small on purpose: a stopword is dropped from a query only when the query has other terms, so an
over-long list would silently weaken short queries. Words are compared BEFORE stemming. Both lists hold
the interjections of their language (ok, hmm; 嗯, 呃): a query of nothing else has no topic.
"""

from __future__ import annotations

_ENGLISH = """
    a about above after again against all am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have
    having he her here hers herself him himself his how i if in into is it its itself just me more most
    my myself no nor not now of off on once only or other our ours ourselves out over own same she should
    so some such than that the their theirs them themselves then there these they this those through to
    too under until up very was we were what when where which while who whom why will with would you your
    yours yourself yourselves
    dont doesnt didnt isnt arent wasnt werent cant couldnt wont wouldnt shouldnt im ive youre
    youve theyre theyve weve hes shes thats theres
    ok okay yeah yep yup hmm hm uh um oh ah eh hey hi lol haha
"""

# Function words, pronouns and particles that carry no topic. Content words that merely look common
# (喜欢, 讨厌, 部署 ...) are deliberately absent: they are what preference and event memories are about.
_CHINESE = """
    的 地 得 了 着 过 是 在 有 和 与 及 或 而 并 且 但 但是 就 也 都 还 又 才 再 很 太 更 最 非常 挺
    我 你 您 他 她 它 我们 你们 他们 她们 它们 咱们 自己 大家 人家
    这 那 这个 那个 这些 那些 这样 那样 这里 那里 哪 哪个 哪里 哪些 什么 怎么 怎样 如何 为什么
    吗 呢 吧 啊 呀 哦 嗯 哈 啦 嘛 么 哇 喔 唉 呃 额 嘿 哎 呵 嗨 喂 诶 哼 嗷
    个 一个 一些 一下 一点 些 把 被 给 让 对 向 从 到 于 为 以 之 其 所 因为 所以 如果 虽然 然后
    不 没 没有 别 会 能 要 想 可以 已经 正在 将 将要 曾经 只 只是 就是 还是 或者 而且 并且 以及
    上 下 里 中 内 外 前 后 时 时候
"""

ENGLISH_STOPWORDS: frozenset[str] = frozenset(_ENGLISH.split())
CHINESE_STOPWORDS: frozenset[str] = frozenset(_CHINESE.split())

# The most frequent function words of each language the Latin path can stem, casefolded WITH their
# diacritics (detection runs before folding). They are the evidence for a run's language (text/scripts.py) and,
# for a non-English query, the words dropped from it. Balanced in size on purpose: a longer list would
# make its language win more often. English's detection list is the short head of ENGLISH_STOPWORDS.
_LATIN = {
    "en": "the and of to is are was were this that with for from have has not you it be on at by",
    "fr": "le la les des du un une et est sont dans pour pas que qui sur avec au aux ce cette ne nous vous "
    "il elle ils je",
    "de": "der die das den dem des und ist sind nicht ein eine einen mit für auf im zu von ich sie wir "
    "auch es war",
    "es": "el la los las del y es son en un una por para con que no se lo al su pero muy está",
    "it": "il lo gli le della del di che è sono un una per con non si da al nel questo anche",
    "pt": "o os as do da dos das e é são em um uma para com que não se no na ao pelo muito",
    "nl": "de het een en is zijn van niet met op te dat die voor ik wij je ook",
}

LATIN_STOPWORDS: dict[str, frozenset[str]] = {
    lang: frozenset(words.split()) for lang, words in _LATIN.items()
}
