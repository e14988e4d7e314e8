<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>AblateChart</name>
    <message>
        <location filename="../verify/ablate_view.py" line="103"/>
        <source>bars: new conversation&apos;s prompt from cache, per setting without | with   line: its time to first token</source>
        <translation>柱：新会话提示中来自缓存的部分，每个设置 去掉 | 保留   线：其首 token 时间</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="105"/>
        <source>No subtraction run yet.</source>
        <translation>尚未运行逐项排除。</translation>
    </message>
</context>
<context>
    <name>AblateView</name>
    <message>
        <location filename="../verify/ablate_view.py" line="119"/>
        <source>Which settings matter?</source>
        <translation>哪些设置有影响？</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="120"/>
        <source>Runs the client once with the profile&apos;s env and once without each of its settings, and shows which ones change the cache reuse (kvswitch verify --ablate). Several runs: minutes.</source>
        <translation>用配置的环境变量运行客户端一次，再逐一去掉每个设置各运行一次，显示哪些设置改变缓存复用（kvswitch verify --ablate）。需运行多次：几分钟。</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="123"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="173"/>
        <source>%1 %2 through “%3”, each setting without → with. Settings that matter: %4</source>
        <translation>%1 %2 经“%3”，每个设置 去掉 → 保留。有影响的设置：%4</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="175"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="188"/>
        <source>Export CSV</source>
        <translation>导出 CSV</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="189"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location filename="../verify/ablate_view.py" line="194"/>
        <source>Not exported: %1</source>
        <translation>未导出：%1</translation>
    </message>
</context>
<context>
    <name>AppController</name>
    <message>
        <location filename="../control/controller.py" line="260"/>
        <source>Undid the last apply.</source>
        <extracomment>four headless Claude Code runs against a local model: minutes on a slow machine the Claude Code to run; empty means the ``claude`` on PATH</extracomment>
        <translation>已撤销上一次应用。</translation>
    </message>
    <message>
        <location filename="../control/controller_verify.py" line="108"/>
        <source>No active profile: apply a profile first, then verify it.</source>
        <translation>没有活动配置：请先应用一个配置，再进行验证。</translation>
    </message>
    <message>
        <location filename="../control/controller.py" line="294"/>
        <source>A session&apos;s cache hit rate dropped</source>
        <translation>一个会话的缓存命中率下降了</translation>
    </message>
    <message>
        <location filename="../control/clients.py" line="76"/>
        <source>Claude Code is not installed here (no “claude” on PATH), so nothing was verified. Install Claude Code, or use “Verify cache” for the synthetic check.</source>
        <translation>本机未安装 Claude Code（PATH 中没有“claude”），因此没有进行验证。请安装 Claude Code，或使用“验证缓存”进行合成检查。</translation>
    </message>
    <message>
        <location filename="../control/clients.py" line="90"/>
        <source>Verify cancelled; the running Claude Code was stopped.</source>
        <translation>验证已取消；正在运行的 Claude Code 已停止。</translation>
    </message>
    <message>
        <location filename="../control/controller_verify.py" line="197"/>
        <source>Verify stopped because of an internal error (it was reported).</source>
        <translation>验证因内部错误而停止（已生成报告）。</translation>
    </message>
    <message>
        <location filename="../control/controller.py" line="288"/>
        <source>Prompt cache keeps missing</source>
        <translation>提示词缓存持续未命中</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="221"/>
        <source>Switched %1 to “%2”: new sessions use it.</source>
        <extracomment>the name lupdate looks for; these texts are in the controller&apos;s context, where its other messages are labels of the clients the last apply wrote, and of those it (only) re-routed</extracomment>
        <translation>已将 %1 切换到“%2”：新会话将使用它。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="224"/>
        <source>%1 routed to “%2” through the gateway: running sessions follow from their next request.</source>
        <translation>%1 已经由网关路由到“%2”：正在运行的会话从下一个请求起跟随。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="228"/>
        <source>“%2” already runs in every client it targets: nothing was written.</source>
        <translation>“%2”已在它所针对的每个客户端中运行：未写入任何内容。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="231"/>
        <source>Open shells need to re-read their rc file.</source>
        <translation>已打开的 shell 需要重新读取其 rc 文件。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="237"/>
        <source>Saved “%1”.</source>
        <translation>已保存“%1”。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="240"/>
        <source>Written to %1.</source>
        <translation>已写入 %1。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="243"/>
        <source>%1 use it from the next request (through the gateway).</source>
        <translation>%1 从下一个请求起使用它（经由网关）。</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="246"/>
        <source>Writing it to the clients failed: %1</source>
        <translation>写入客户端失败：%1</translation>
    </message>
    <message>
        <location filename="../control/controller_live.py" line="250"/>
        <source>%1 still run the earlier version.</source>
        <translation>%1 仍在运行之前的版本。</translation>
    </message>
</context>
<context>
    <name>ApplyDialog</name>
    <message>
        <location filename="../profiles/diff_dialog.py" line="53"/>
        <source>Apply “%1”</source>
        <translation>应用“%1”</translation>
    </message>
    <message>
        <location filename="../profiles/diff_dialog.py" line="53"/>
        <source>Changes made by “%1”</source>
        <translation>“%1”所做的更改</translation>
    </message>
    <message>
        <location filename="../profiles/diff_dialog.py" line="61"/>
        <source>%1 file(s) changed. Each was backed up first; Undo puts them back.</source>
        <translation>已更改 %1 个文件。每个文件都先做了备份；“撤销”可以还原。</translation>
    </message>
    <message>
        <location filename="../profiles/diff_dialog.py" line="64"/>
        <source>%1 file(s) will change. Every file is backed up first; Undo puts them back.</source>
        <translation>将修改 %1 个文件。每个文件都会先备份；“撤销”可以还原。</translation>
    </message>
    <message>
        <location filename="../profiles/diff_dialog.py" line="67"/>
        <source>Nothing to change: every file already matches this profile.</source>
        <translation>无需修改：所有文件已与此配置一致。</translation>
    </message>
    <message>
        <location filename="../profiles/diff_dialog.py" line="88"/>
        <source>(no change)</source>
        <translation>（无修改）</translation>
    </message>
    <message>
        <location filename="../profiles/diff_dialog.py" line="97"/>
        <source>Apply</source>
        <translation>应用</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="190"/>
        <location filename="../profiles/diff_dialog.py" line="133"/>
        <source>This file changed after the preview you confirmed; this is what applying does now.</source>
        <translation>确认预览后此文件已被修改；以下是现在应用时的实际改动。</translation>
    </message>
</context>
<context>
    <name>CacheEventsModel</name>
    <message>
        <location filename="../logs/events_model.py" line="137"/>
        <location filename="../logs/events_model.py" line="139"/>
        <source>Time</source>
        <extracomment>more cached tokens than a chat template&apos;s header and a few words (``logs.diagnose.SMALL_PREFIX``) what the time column shows, best first (``CacheEventsModel.time_basis``) display verdicts whose lost tokens count as re-processed: cold starts and new conversations are expected listed requests kept waiting for the gateway&apos;s row (it comes within seconds; others never do) the slot&apos;s previous prompt when this one arrived (its share of the totals) listed requests the gateway has not judged (yet), newest kept; and its rows none has taken</extracomment>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="137"/>
        <source>Tokens</source>
        <translation>token 数</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="137"/>
        <source>Cached</source>
        <translation>已缓存</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="137"/>
        <source>Request</source>
        <translation>请求</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="138"/>
        <source>New</source>
        <translation>新 token</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="138"/>
        <source>Prompt ms</source>
        <translation>提示耗时 (ms)</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="138"/>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="139"/>
        <source>Server clock</source>
        <translation>服务器时钟</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="140"/>
        <source>Read at</source>
        <translation>读取时间</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="142"/>
        <source>When the request finished, as the server&apos;s log prints it.</source>
        <translation>请求完成的时间，按服务器日志所打印的时间。</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="143"/>
        <source>When the request finished, by the server&apos;s own clock: time since it started (minutes:seconds), printed in front of each line. This log carries no wall-clock time.</source>
        <translation>请求完成的时间，按服务器自己的时钟：自服务器启动以来的时间（分:秒），打印在每行开头。此日志不含实际时钟时间。</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="146"/>
        <source>This log carries no time of its own: this is when KV Switch read the request&apos;s lines, not when the server handled it.</source>
        <translation>此日志本身不含时间：这是 KV Switch 读取该请求各行的时间，而不是服务器处理它的时间。</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="151"/>
        <source>hit</source>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="151"/>
        <source>partial</source>
        <translation>部分</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="151"/>
        <source>miss</source>
        <translation>未命中</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="152"/>
        <source>cold</source>
        <translation>冷启动</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="152"/>
        <source>shared prefix</source>
        <translation>共享前缀</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="288"/>
        <source>The KV Switch gateway relayed this request: %1</source>
        <translation>此请求由 KV Switch 网关转发：%1</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="289"/>
        <source>a hit</source>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="378"/>
        <source>1 request (/metrics)</source>
        <translation>1 个请求（/metrics）</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="379"/>
        <source>%1 requests together (/metrics)</source>
        <translation>%1 个请求合计（/metrics）</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="383"/>
        <source>task %1</source>
        <translation>任务 %1</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="385"/>
        <source>slot %1</source>
        <translation>槽 %1</translation>
    </message>
    <message>
        <location filename="../logs/events_model.py" line="388"/>
        <source>line %1</source>
        <translation>第 %1 行</translation>
    </message>
</context>
<context>
    <name>CacheReasons</name>
    <message>
        <location filename="../control/reason_words.py" line="25"/>
        <source>a new conversation (nothing to reuse)</source>
        <translation>新的对话（没有可复用的内容）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="26"/>
        <source>the prompt&apos;s prefix changed</source>
        <translation>提示词前缀变了</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="27"/>
        <source>the server dropped the cached prefix (evicted)</source>
        <translation>服务器丢弃了缓存的前缀（被逐出）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="28"/>
        <source>the vendor&apos;s cache expired</source>
        <translation>服务商的缓存已过期</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="29"/>
        <source>the server forced re-processing</source>
        <translation>服务器强制重新处理</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="30"/>
        <source>no reason could be told</source>
        <translation>无法判断原因</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="31"/>
        <source>a new conversation (its own words are new)</source>
        <translation>新对话（其自身的文字是新的）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="39"/>
        <source>Claude Code&apos;s attribution block, which differs per conversation</source>
        <translation>Claude Code 的计费头块，每个会话都不同</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="41"/>
        <source>the same tools in another order</source>
        <translation>相同的工具，但顺序不同</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="42"/>
        <source>the tool list changed</source>
        <translation>工具列表变了</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="43"/>
        <source>a system reminder moved</source>
        <translation>一条系统提醒换了位置</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="44"/>
        <source>a system reminder changed</source>
        <translation>一条系统提醒变了</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="45"/>
        <source>a part was inserted before it</source>
        <translation>前面插入了一部分</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="46"/>
        <source>a part was removed</source>
        <translation>有一部分被删除</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="47"/>
        <source>the prompt ends earlier than the one before</source>
        <translation>提示比上一个更早结束</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="48"/>
        <source>its text changed</source>
        <translation>其文本变了</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="54"/>
        <source>another session</source>
        <translation>另一个会话</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="55"/>
        <source>a subagent of this session</source>
        <translation>本会话的子代理</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="56"/>
        <source>a side request of this session</source>
        <translation>本会话的旁路请求</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="74"/>
        <source>MCP servers enabled</source>
        <translation>启用的 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="75"/>
        <source>MCP servers disabled</source>
        <translation>停用的 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="78"/>
        <source>%1 (%2 tools)</source>
        <translation>%1（%2 个工具）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="90"/>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="93"/>
        <source>%1 of %2 reusable tokens (prompt: %3)</source>
        <translation>可复用的 %2 个 token 中复用了 %1 个（提示：%3）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="94"/>
        <source>Reused</source>
        <translation>已复用</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="101"/>
        <source>%1 (%2 requests, %3 prompt tokens)</source>
        <translation>%1（%2 个请求，%3 个提示 token）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="105"/>
        <source>Ran in between</source>
        <translation>其间运行了</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="107"/>
        <source>%1 s, longer than the vendor keeps a prompt cached (%2 s)</source>
        <translation>%1 秒，超过厂商缓存提示的时长（%2 秒）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="108"/>
        <source>Idle</source>
        <translation>空闲</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="110"/>
        <source>The server said</source>
        <translation>服务器的原话</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="111"/>
        <source>Meaning</source>
        <translation>含义</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="112"/>
        <source>Advice</source>
        <translation>建议</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="117"/>
        <source>Fix</source>
        <translation>修复</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="118"/>
        <source>set %1 in the profile&apos;s environment</source>
        <translation>在配置的环境变量中设置 %1</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="130"/>
        <source>it differs from the conversation before where the user&apos;s own words begin (%1); what comes before them could be reused, and its own %2 tokens are new, as expected</source>
        <translation>它与之前的对话在用户自己的文字开始处（%1）不同；其前面的内容可以复用，它自己的 %2 个 token 是新的，这符合预期</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="133"/>
        <source>New conversation</source>
        <translation>新对话</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="136"/>
        <source>%1 tokens come before the user&apos;s words in the server&apos;s own rendering of the prompt (the estimate from the request&apos;s characters was %2)</source>
        <translation>在服务器自己渲染的提示中，用户文字之前有 %1 个 token（按请求字符估算为 %2）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="139"/>
        <source>Measured</source>
        <translation>实测</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="149"/>
        <source>this session&apos;s request before</source>
        <translation>本会话的上一个请求</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="151"/>
        <source>the request before, of session %1</source>
        <translation>会话 %1 的上一个请求</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="155"/>
        <source>(%1 s earlier)</source>
        <translation>（早 %1 秒）</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="156"/>
        <source>Compared with</source>
        <translation>对比对象</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="167"/>
        <source>at character %1</source>
        <translation>第 %1 个字符处</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="168"/>
        <source>Where</source>
        <translation>位置</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="172"/>
        <source>What changed</source>
        <translation>变化</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="175"/>
        <source>Tools added</source>
        <translation>新增工具</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="177"/>
        <source>Tools removed</source>
        <translation>删除工具</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="180"/>
        <source>Note</source>
        <translation>备注</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="181"/>
        <source>the server stopped reusing before this point, and nothing else ran in between</source>
        <translation>服务器在此位置之前就停止了复用，其间也没有运行其他请求</translation>
    </message>
    <message>
        <location filename="../control/reason_words.py" line="184"/>
        <source>Also differs</source>
        <translation>另有不同</translation>
    </message>
</context>
<context>
    <name>CheckNote</name>
    <message>
        <location filename="../profiles/check_note.py" line="59"/>
        <source>Retry</source>
        <extracomment>how much of a server&apos;s message is shown (an HTML error page can be long)</extracomment>
        <translation>重试</translation>
    </message>
    <message>
        <location filename="../profiles/check_note.py" line="83"/>
        <source>The check failed</source>
        <translation>检查失败</translation>
    </message>
    <message>
        <location filename="../profiles/check_note.py" line="94"/>
        <source>The server said: %1</source>
        <translation>服务器返回：%1</translation>
    </message>
    <message>
        <location filename="../profiles/check_note.py" line="96"/>
        <source>Fix: %1</source>
        <translation>解决方法：%1</translation>
    </message>
    <message>
        <location filename="../profiles/check_note.py" line="98"/>
        <source>Connected: %1</source>
        <translation>已连接：%1</translation>
    </message>
    <message>
        <location filename="../profiles/check_note.py" line="101"/>
        <source>Connection failed: %1</source>
        <translation>连接失败：%1</translation>
    </message>
</context>
<context>
    <name>ClientFilter</name>
    <message>
        <location filename="../profiles/client_filter.py" line="41"/>
        <location filename="../profiles/client_filter.py" line="79"/>
        <source>All</source>
        <translation>全部</translation>
    </message>
    <message>
        <location filename="../profiles/client_filter.py" line="42"/>
        <source>Every profile</source>
        <translation>所有配置</translation>
    </message>
    <message>
        <location filename="../profiles/client_filter.py" line="43"/>
        <source>Only the profiles written to %1</source>
        <translation>只显示写入 %1 的配置</translation>
    </message>
</context>
<context>
    <name>ClientNames</name>
    <message>
        <location filename="../control/clients.py" line="43"/>
        <source>shell</source>
        <extracomment>the clients offered next to Claude Code, in the order shown</extracomment>
        <translation>shell</translation>
    </message>
    <message>
        <location filename="../control/clients.py" line="59"/>
        <source>%1 and %2</source>
        <translation>%1 和 %2</translation>
    </message>
</context>
<context>
    <name>ClientReportView</name>
    <message>
        <location filename="../verify/verify_client_view.py" line="51"/>
        <source>Conversation</source>
        <extracomment>a turn&apos;s verdict → the cache state whose colour it wears (the neutral ones are expected)</extracomment>
        <translation>会话</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="51"/>
        <source>Turn</source>
        <translation>轮次</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="51"/>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="51"/>
        <source>Reused</source>
        <translation>已复用</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="52"/>
        <source>Re-processed</source>
        <translation>重新处理</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="52"/>
        <source>Cost</source>
        <translation>代价</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="52"/>
        <source>First byte</source>
        <translation>首字节</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="52"/>
        <source>Why</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="63"/>
        <source>hit</source>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="63"/>
        <source>partial</source>
        <translation>部分</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="63"/>
        <source>miss</source>
        <translation>未命中</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="64"/>
        <source>cold</source>
        <translation>冷启动</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="64"/>
        <source>shared prefix</source>
        <translation>共享前缀</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="65"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="92"/>
        <source>Claude Code %1 through “%2”: %3</source>
        <translation>Claude Code %1 经由“%2”：%3</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="98"/>
        <source>Per turn inside a conversation: up to %1 tokens re-processed</source>
        <translation>会话内每轮：最多重新处理 %1 个 token</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="101"/>
        <source>, about %1 s</source>
        <translation>，约 %1 秒</translation>
    </message>
    <message>
        <location filename="../verify/verify_client_view.py" line="105"/>
        <source>Per new conversation: %1 of %2 tokens reused.</source>
        <translation>每个新会话：%2 个 token 中复用了 %1 个。</translation>
    </message>
</context>
<context>
    <name>CompareDialog</name>
    <message>
        <location filename="../verify/verify_compare.py" line="118"/>
        <source>Compare verify runs</source>
        <translation>比较验证记录</translation>
    </message>
    <message>
        <location filename="../verify/verify_compare.py" line="123"/>
        <source>Field</source>
        <translation>字段</translation>
    </message>
    <message>
        <location filename="../verify/verify_compare.py" line="123"/>
        <source>Older run, %1</source>
        <translation>较早的记录，%1</translation>
    </message>
    <message>
        <location filename="../verify/verify_compare.py" line="124"/>
        <source>Newer run, %1</source>
        <translation>较新的记录，%1</translation>
    </message>
</context>
<context>
    <name>EditorPanel</name>
    <message>
        <location filename="../profiles/editor_panel.py" line="44"/>
        <source>● unsaved changes</source>
        <translation>● 有未保存的更改</translation>
    </message>
    <message>
        <location filename="../profiles/editor_panel.py" line="45"/>
        <source>Save with Ctrl+S, or Revert</source>
        <translation>按 Ctrl+S 保存，或点“还原”</translation>
    </message>
    <message>
        <location filename="../profiles/editor_panel.py" line="49"/>
        <source>Close the editor (Esc)</source>
        <translation>关闭编辑器（Esc）</translation>
    </message>
    <message>
        <location filename="../profiles/editor_panel.py" line="50"/>
        <source>Close the editor</source>
        <translation>关闭编辑器</translation>
    </message>
</context>
<context>
    <name>EmptyState</name>
    <message>
        <location filename="../profiles/profile_panel.py" line="26"/>
        <source>No profiles yet</source>
        <translation>还没有配置</translation>
    </message>
    <message>
        <location filename="../profiles/profile_panel.py" line="31"/>
        <source>A profile says where Claude Code and Codex send requests: a server on this machine or a cloud vendor. Pick one and add your key.</source>
        <translation>配置决定 Claude Code 和 Codex 把请求发往何处：本机上的服务器，或云端服务商。选一个，再填上你的密钥。</translation>
    </message>
    <message>
        <location filename="../profiles/profile_panel.py" line="34"/>
        <source>Add your first profile</source>
        <translation>添加第一个配置</translation>
    </message>
</context>
<context>
    <name>EngineText</name>
    <message>
        <location filename="../control/engine_templates.py" line="16"/>
        <source>HIT</source>
        <extracomment>verdict and state words, as the engines spell them (verify upper case, logs and client runs lower)</extracomment>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="17"/>
        <source>PARTIAL</source>
        <translation>部分复用</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="18"/>
        <source>MISS</source>
        <translation>未命中</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="19"/>
        <source>UNKNOWN</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="20"/>
        <source>ERROR</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="21"/>
        <source>hit</source>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="22"/>
        <source>partial</source>
        <translation>部分复用</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="23"/>
        <source>miss</source>
        <translation>未命中</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="24"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="25"/>
        <source>error</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="26"/>
        <source>cold</source>
        <translation>冷启动</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="27"/>
        <source>shared_prefix</source>
        <translation>共享前缀</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="28"/>
        <source>synthetic</source>
        <translation>合成</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="29"/>
        <source>client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="30"/>
        <source>not started</source>
        <translation>未启动</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="31"/>
        <source>Done</source>
        <translation>完成</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="32"/>
        <source>Detecting the server</source>
        <translation>正在检测服务器</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="33"/>
        <source>Sending the cold request</source>
        <translation>正在发送冷请求</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="34"/>
        <source>Sending the warm request (same prefix)</source>
        <translation>正在发送热请求（相同前缀）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="35"/>
        <source>Reading the cache numbers</source>
        <translation>正在读取缓存数据</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="36"/>
        <source>Replaying Claude Code-shaped requests</source>
        <translation>正在重放 Claude Code 形式的请求</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="37"/>
        <source>verification cancelled</source>
        <translation>验证已取消</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="38"/>
        <source>{client}: conversation {conversation}, turn {turn}</source>
        <translation>{client}：第 {conversation} 个会话，第 {turn} 轮</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="39"/>
        <source>{client}: done</source>
        <translation>{client}：完成</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="45"/>
        <source>First divergence: {part}, byte {part_offset} of the part (byte {offset} of the prompt); {share} of B&apos;s prompt is identical before it ({identical} of {total} bytes).</source>
        <extracomment>sentences with named fields, exactly as the engines format them</extracomment>
        <translation>首个分歧：{part}，该部分的第 {part_offset} 字节（提示词的第 {offset} 字节）；在它之前 B 的提示词有 {share} 相同（{total} 字节中的 {identical} 字节）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="48"/>
        <source>The two prompts are identical: the whole prompt can be reused.</source>
        <translation>两个提示词完全相同：整个提示词都可复用。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="49"/>
        <source>B continues A (append only): all {count} bytes of A&apos;s prompt can be reused.</source>
        <translation>B 接续 A（只追加）：A 的提示词全部 {count} 字节都可复用。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="51"/>
        <source>B is a prefix of A (shorter request): all of it can be reused.</source>
        <translation>B 是 A 的前缀（更短的请求）：全部可复用。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="52"/>
        <source>  other parts that differ: {parts}</source>
        <translation>  其他不同的部分：{parts}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="53"/>
        <source>  same:  …{text}</source>
        <translation>  相同：…{text}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="54"/>
        <source>  A:     {text}…</source>
        <translation>  A：   {text}…</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="55"/>
        <source>  B:     {text}…</source>
        <translation>  B：   {text}…</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="56"/>
        <source>Cause: {cause}</source>
        <translation>原因：{cause}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="57"/>
        <source>Fix: set {env}</source>
        <translation>修复：设置 {env}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="58"/>
        <source>Note: {note}</source>
        <translation>注意：{note}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="60"/>
        <source>the server reused {cached} of {prompt} prompt tokens{share}: the prefix cache works.</source>
        <translation>服务器复用了 {prompt} 个提示 token 中的 {cached} 个{share}：前缀缓存有效。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="62"/>
        <source>the server reused only {cached} of {prompt} prompt tokens{share}.</source>
        <translation>服务器只复用了 {prompt} 个提示 token 中的 {cached} 个{share}。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="63"/>
        <source>the server re-processed the prompt ({cached} of {prompt} tokens reused{share}) although the prefix was identical.</source>
        <translation>前缀完全相同，服务器却重新处理了提示（{prompt} 个 token 中只复用了 {cached} 个{share}）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="65"/>
        <source>the server answered but reports no prompt-cache numbers.{hint}</source>
        <translation>服务器有应答，但没有报告提示缓存数据。{hint}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="66"/>
        <source>The warm request&apos;s first token came {speedup}x faster, which suggests reuse, but timing alone proves nothing.</source>
        <translation>热请求的首个 token 快了 {speedup} 倍，像是复用了缓存，但仅凭时间不能证明。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="68"/>
        <source>The warm request was not faster either.</source>
        <translation>热请求也没有更快。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="70"/>
        <source>the server did not reuse the identical prefix; check that its prompt/prefix caching is enabled.</source>
        <translation>服务器没有复用完全相同的前缀；请检查其提示/前缀缓存是否已启用。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="72"/>
        <source>part of the identical prefix was re-processed: the cache may have been trimmed (context shift, --cache-reuse chunks) or evicted by another request in between.</source>
        <translation>相同前缀的一部分被重新处理：缓存可能被裁剪（上下文移位、--cache-reuse 分块），或在两次请求之间被其他请求挤出。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="75"/>
        <source>attach the server&apos;s log to the profile so the log engine can count reused tokens.</source>
        <translation>请把服务器日志关联到该配置，日志引擎才能统计复用的 token。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="77"/>
        <source>nothing listens at that address: start the server or fix the port in the profile.</source>
        <translation>该地址上没有服务在监听：请启动服务器，或修正配置中的端口。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="79"/>
        <source>the server rejected the key: check the profile&apos;s API key.</source>
        <translation>服务器拒绝了密钥：请检查配置的 API 密钥。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="80"/>
        <source>the server&apos;s context is too small for the probe; start it with a larger -c / --ctx-size.</source>
        <translation>服务器的上下文太小，放不下探测请求；请用更大的 -c / --ctx-size 启动。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="82"/>
        <source>the server does not know that model name: fix the profile&apos;s model.</source>
        <translation>服务器不认识该模型名：请修正配置中的模型。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="83"/>
        <source>the server accepted the connection but did not answer in time (busy, loading, or hung).</source>
        <translation>服务器接受了连接，但没有及时应答（忙碌、正在加载或已挂起）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="85"/>
        <source>the server sent far more than any API answer; is this URL really an inference server?</source>
        <translation>服务器发送的内容远超任何 API 应答；这个 URL 真的是推理服务器吗？</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="88"/>
        <source>{url}: connection refused — is the server running on that port?</source>
        <translation>{url}：连接被拒绝——服务器是否在该端口运行？</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="89"/>
        <source>{url}: cannot connect ({reason})</source>
        <translation>{url}：无法连接（{reason}）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="90"/>
        <source>{url}: no complete answer within the {seconds} s timeout</source>
        <translation>{url}：在 {seconds} 秒超时内没有完整应答</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="91"/>
        <source>{url}: the server closed the connection without a complete answer</source>
        <translation>{url}：服务器未给出完整应答就关闭了连接</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="92"/>
        <source>HTTP {status} from {url}: {message}</source>
        <translation>{url} 返回 HTTP {status}：{message}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="93"/>
        <source>{url}: the server answered 200 but sent no JSON events</source>
        <translation>{url}：服务器返回 200，但没有发送 JSON 事件</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="94"/>
        <source>{url}: the server reported an error mid-stream: {message}</source>
        <translation>{url}：服务器在流中途报告错误：{message}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="95"/>
        <source>{url}: not a JSON answer: {message}</source>
        <translation>{url}：应答不是 JSON：{message}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="96"/>
        <source>{url}: empty answer</source>
        <translation>{url}：空应答</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="97"/>
        <source>{url}: none of the known APIs answered ({errors}) — check the base URL</source>
        <translation>{url}：已知的 API 都没有应答（{errors}）——请检查基础 URL</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="99"/>
        <source>warm request: {reading} (decided)</source>
        <translation>热请求：{reading}（据此判定）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="100"/>
        <source>warm request: {reading} (decided; {why})</source>
        <translation>热请求：{reading}（据此判定；{why}）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="101"/>
        <source>warm request: {reading}</source>
        <translation>热请求：{reading}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="102"/>
        <source>cold request: {reading}</source>
        <translation>冷请求：{reading}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="103"/>
        <source>{source} = {cached} of {prompt} prompt tokens</source>
        <translation>{source} = {prompt} 个提示 token 中的 {cached} 个</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="104"/>
        <source>{source}: prompt {prompt} tokens, no cache count</source>
        <translation>{source}：提示 {prompt} 个 token，无缓存计数</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="105"/>
        <source>time to first token: cold {cold} ms, warm {warm} ms ({speedup}x)</source>
        <translation>首 token 时间：冷 {cold} ms，热 {warm} ms（{speedup} 倍）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="106"/>
        <source>time to first token: cold {cold} ms, warm {warm} ms</source>
        <translation>首 token 时间：冷 {cold} ms，热 {warm} ms</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="107"/>
        <source>note: {source} disagrees ({cached} of {prompt}); another client may have used the server at the same time, or the log belongs to another server.</source>
        <translation>注意：{source} 的数据不一致（{prompt} 个中的 {cached} 个）；可能有其他客户端同时使用了该服务器，或该日志属于另一台服务器。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="111"/>
        <source>could not replay Claude Code&apos;s requests: {error}</source>
        <translation>无法重放 Claude Code 的请求：{error}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="112"/>
        <source>the server has no {api} /v1/messages endpoint ({error}); Claude Code needs one, or a gateway that translates</source>
        <translation>服务器没有 {api} /v1/messages 端点（{error}）；Claude Code 需要它，或者一个能转换协议的网关</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="114"/>
        <source>the server reports no cache numbers for Claude Code-shaped requests.</source>
        <translation>对于 Claude Code 形式的请求，服务器没有报告缓存数据。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="115"/>
        <source>a new conversation keeps {with_cached} of {with_prompt} tokens with the billing header, {without_cached} of {without_prompt} without it: the header makes no difference on this server.</source>
        <translation>新会话在带计费头时保留 {with_prompt} 个 token 中的 {with_cached} 个，不带时保留 {without_prompt} 个中的 {without_cached} 个：在这台服务器上计费头没有影响。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="118"/>
        <source>a new conversation keeps {with_cached} of {with_prompt} tokens with the billing header, {without_cached} of {without_prompt} without it: the header breaks the prefix. Set CLAUDE_CODE_ATTRIBUTION_HEADER=0. (Claude Code puts the user&apos;s first words before its environment block, so even without the header a new conversation re-processes what follows them; later turns reuse all.)</source>
        <translation>新会话在带计费头时保留 {with_prompt} 个 token 中的 {with_cached} 个，不带时保留 {without_prompt} 个中的 {without_cached} 个：计费头破坏了前缀。请设置 CLAUDE_CODE_ATTRIBUTION_HEADER=0。（Claude Code 把用户的第一句话放在其环境块之前，所以即使没有计费头，新会话也会重新处理其后的内容；之后的轮次会全部复用。）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="124"/>
        <source>In the server&apos;s tokens ({server}): A has {a}, B has {b}. {cause}</source>
        <translation>按服务器的 token 计（{server}）：A 有 {a} 个，B 有 {b} 个。{cause}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="125"/>
        <source>In the server&apos;s tokens ({server}): A has {a}, B has {b}.</source>
        <translation>按服务器的 token 计（{server}）：A 有 {a} 个，B 有 {b} 个。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="126"/>
        <source>Claude Code&apos;s x-anthropic-billing-header system block differs between conversations, so the server re-processes the whole prompt. CLAUDE_CODE_ATTRIBUTION_HEADER=0 removes it.</source>
        <translation>Claude Code 的 x-anthropic-billing-header 系统块在各会话之间不同，因此服务器会重新处理整个提示。CLAUDE_CODE_ATTRIBUTION_HEADER=0 可去掉它。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="129"/>
        <source>only whitespace differs (spaces, tabs or line breaks) — the tokens still change.</source>
        <translation>只有空白不同（空格、制表符或换行）——但 token 仍然变了。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="131"/>
        <source>a date or time inside the prompt changed; anything after it is re-processed. Move it to the end of the prompt or keep it fixed.</source>
        <translation>提示中的日期或时间变了；其后的内容都会被重新处理。请把它移到提示末尾，或保持不变。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="133"/>
        <source>a per-request id (uuid or hex token) inside the prompt changed.</source>
        <translation>提示中每次请求不同的 id（uuid 或十六进制串）变了。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="134"/>
        <source>the user&apos;s message comes before a large unchanged block ({label}, {size} bytes), so that block is re-processed every time the user&apos;s words differ.</source>
        <translation>用户消息位于一个未改变的大块（{label}，{size} 字节）之前，所以每当用户的话不同，这个块都会被重新处理。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="137"/>
        <source>the system prompt itself changed.</source>
        <translation>系统提示本身变了。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="138"/>
        <source>the tools list changed.</source>
        <translation>工具列表变了。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="139"/>
        <source>the tools list changed ({changes}).</source>
        <translation>工具列表变了（{changes}）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="141"/>
        <source>{server} did not keep the prefix: prompt caching may be off (--no-cache-prompt, or a client sending cache_prompt:false), the warm request may have gone to another slot (-np &gt; 1), or the model&apos;s memory (SWA/hybrid/recurrent) forces full re-processing.</source>
        <translation>{server} 没有保留前缀：可能关闭了提示缓存（--no-cache-prompt，或客户端发送了 cache_prompt:false），热请求可能去了另一个槽位（-np &gt; 1），或模型的记忆结构（SWA/混合/循环）强制完全重新处理。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="145"/>
        <source>Start {server} with --swa-full (SWA models) or keep more context checkpoints (--ctx-checkpoints), or use a model without SWA.</source>
        <translation>用 --swa-full 启动 {server}（SWA 模型），或保留更多上下文检查点（--ctx-checkpoints），或换用不带 SWA 的模型。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="147"/>
        <source>The last {count} requests each re-processed almost the whole prompt (about {prompt} tokens) and reused only the first ~{reused} tokens from the cache, then the prompt differs. Something at the very start of the prompt changes every conversation, for example Claude Code&apos;s billing header (x-anthropic-billing-header). Set CLAUDE_CODE_ATTRIBUTION_HEADER=0 in the profile&apos;s environment.</source>
        <translation>最近 {count} 个请求每次都重新处理了几乎整个提示（约 {prompt} 个 token），只从缓存复用了开头约 {reused} 个 token，之后提示就不同了。提示最开头有内容在每个会话都会变化，例如 Claude Code 的计费头（x-anthropic-billing-header）。请在配置的环境变量中设置 CLAUDE_CODE_ATTRIBUTION_HEADER=0。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="153"/>
        <source>{count} of the last requests were fully re-processed because the model uses sliding-window attention or hybrid/recurrent memory and the cache could not be rolled back to where the prompt changed. {advice}</source>
        <translation>最近有 {count} 个请求被完全重新处理：模型使用滑动窗口注意力或混合/循环记忆，缓存无法回退到提示发生变化的位置。{advice}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="157"/>
        <source>Keep the full sliding-window cache or more context checkpoints if the server has a setting for it, or use a model without SWA.</source>
        <translation>如果服务器有相应设置，请保留完整的滑动窗口缓存或更多上下文检查点，或换用不带 SWA 的模型。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="159"/>
        <source>The last {count} requests reused nothing, although the server already held the same prompt: the client disables prompt caching (&quot;cache_prompt&quot;: false in the request) or the server runs with --no-cache-prompt.</source>
        <translation>最近 {count} 个请求什么都没复用，尽管服务器已持有相同的提示：客户端关闭了提示缓存（请求中的 &quot;cache_prompt&quot;: false），或服务器以 --no-cache-prompt 运行。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="163"/>
        <source>The last {count} requests reused nothing from the cache: the prompt changes at its very first tokens, or prompt caching is disabled (&quot;cache_prompt&quot;: false, --no-cache-prompt), or each request lands on a slot that never held it (try -np 1 or pin id_slot).</source>
        <translation>最近 {count} 个请求没有从缓存复用任何内容：提示在最开头的 token 就变了，或提示缓存被关闭（&quot;cache_prompt&quot;: false、--no-cache-prompt），或每个请求都落到了从未持有它的槽位（试试 -np 1 或固定 id_slot）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="168"/>
        <source>no answer within {seconds} s</source>
        <translation>{seconds} 秒内无应答</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="169"/>
        <source>The server is slow or a firewall drops the traffic; check the host and port, or raise --timeout for a big local model.</source>
        <translation>服务器太慢，或防火墙丢弃了流量；请检查主机和端口，大型本地模型可调高 --timeout。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="171"/>
        <source>the host name {host} does not resolve</source>
        <translation>主机名 {host} 无法解析</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="172"/>
        <source>Check the spelling of the base URL, your DNS or proxy.</source>
        <translation>请检查基础 URL 的拼写、DNS 或代理。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="173"/>
        <source>nothing listens on {address}</source>
        <translation>{address} 上没有服务在监听</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="174"/>
        <source>Start the server, or fix the port in the base URL.</source>
        <translation>请启动服务器，或修正基础 URL 中的端口。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="175"/>
        <source>TLS handshake failed</source>
        <translation>TLS 握手失败</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="176"/>
        <source>The TLS handshake failed: if the server speaks plain HTTP use http://; otherwise its certificate is not trusted by this machine (a proxy, or a self-signed certificate).</source>
        <translation>TLS 握手失败：如果服务器使用明文 HTTP，请用 http://；否则本机不信任它的证书（代理或自签名证书）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="179"/>
        <source>the connection failed</source>
        <translation>连接失败</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="180"/>
        <source>Check the URL and the network.</source>
        <translation>请检查 URL 和网络。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="181"/>
        <source>HTTP {status}: redirected to {location}</source>
        <translation>HTTP {status}：重定向到 {location}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="182"/>
        <source>HTTP {status}: the key was refused</source>
        <translation>HTTP {status}：密钥被拒绝</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="183"/>
        <source>HTTP {status}: the server has no route {path}</source>
        <translation>HTTP {status}：服务器没有路由 {path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="184"/>
        <source>HTTP 429: rate limit or quota reached</source>
        <translation>HTTP 429：达到速率限制或配额</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="185"/>
        <source>Wait and retry, or check the plan&apos;s quota and balance with the vendor.</source>
        <translation>请稍后重试，或向服务商查询套餐配额和余额。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="186"/>
        <source>HTTP {status}: the server failed</source>
        <translation>HTTP {status}：服务器出错</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="187"/>
        <source>A fault on the server&apos;s side: retry later; for a local server read its log.</source>
        <translation>服务器端故障：请稍后重试；本地服务器请查看其日志。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="189"/>
        <source>HTTP {status}: the request was refused</source>
        <translation>HTTP {status}：请求被拒绝</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="190"/>
        <source>HTTP {status} but the body is not JSON</source>
        <translation>HTTP {status}，但正文不是 JSON</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="191"/>
        <source>HTTP {status}, answered as {model}</source>
        <translation>HTTP {status}，以 {model} 应答</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="192"/>
        <source>HTTP {status}, listed its models</source>
        <translation>HTTP {status}，已列出其模型</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="193"/>
        <source>Check the key, and that it belongs to this server (keys are per vendor and per plan).</source>
        <translation>请检查密钥，并确认它属于这台服务器（密钥按服务商和套餐区分）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="195"/>
        <source>The profile has no key: kvswitch profile edit {name} --api-key-stdin</source>
        <translation>该配置没有密钥：kvswitch profile edit {name} --api-key-stdin</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="196"/>
        <source>Check the key; {vendor} issues keys at {url}.</source>
        <translation>请检查密钥；{vendor} 在 {url} 发放密钥。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="197"/>
        <source>Check the model name (&apos;kvswitch models {name}&apos; lists what it serves).</source>
        <translation>请检查模型名（&apos;kvswitch models {name}&apos; 会列出它提供的模型）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="198"/>
        <source>OK [{outcome}] {url}: {summary} ({ms} ms)</source>
        <translation>成功 [{outcome}] {url}：{summary}（{ms} ms）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="199"/>
        <source>FAILED [{outcome}] {url}: {summary} ({ms} ms)</source>
        <translation>失败 [{outcome}] {url}：{summary}（{ms} ms）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="200"/>
        <source>server said: {message}</source>
        <translation>服务器返回：{message}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="201"/>
        <source>fix: {fix}</source>
        <translation>修正：{fix}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="202"/>
        <source>Use the address it redirects to as the base URL (clients do not follow redirects for POST).</source>
        <translation>请把它重定向到的地址用作基础 URL（客户端不会为 POST 跟随重定向）。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="204"/>
        <source>The base URL has a path segment too many or too few (Claude Code appends /v1/messages itself).{hint}</source>
        <translation>基础 URL 的路径多了或少了一段（Claude Code 会自己追加 /v1/messages）。{hint}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="206"/>
        <source>The catalog&apos;s {api} endpoint for {host} is {urls}.</source>
        <translation>目录中 {host} 的 {api} 端点是 {urls}。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="207"/>
        <source>The base URL probably points at a web page or a proxy, not at the API.{hint}</source>
        <translation>基础 URL 可能指向网页或代理，而不是 API。{hint}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="209"/>
        <source>HTTP {status} with an error object instead of {expected}</source>
        <translation>HTTP {status}，返回的是错误对象而不是 {expected}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="210"/>
        <source>Read the server&apos;s message: the model name or the request shape is usually what it rejects.</source>
        <translation>请阅读服务器的消息：它拒绝的通常是模型名或请求格式。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="212"/>
        <source>HTTP {status} but no {expected} in the answer</source>
        <translation>HTTP {status}，但应答中没有 {expected}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="213"/>
        <source>This URL does not serve the API the client speaks; check the base URL&apos;s path.{hint}</source>
        <translation>这个 URL 不提供客户端所用的 API；请检查基础 URL 的路径。{hint}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="215"/>
        <source>{vendor} reads its key from {env}, the profile writes it to {profile_env}: kvswitch profile edit {name} --key-env {env}</source>
        <translation>{vendor} 从 {env} 读取密钥，而该配置写入的是 {profile_env}：kvswitch profile edit {name} --key-env {env}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="217"/>
        <source>{vendor} is listed (unconfirmed) as reading its key from {env}, the profile writes it to {profile_env}: kvswitch profile edit {name} --key-env {env}</source>
        <translation>目录记载（未确认）{vendor} 从 {env} 读取密钥，而该配置写入的是 {profile_env}：kvswitch profile edit {name} --key-env {env}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="220"/>
        <source>no response headers within {seconds} s</source>
        <translation>{seconds} 秒内没有收到响应头</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="221"/>
        <source>no complete answer within the {seconds} s timeout</source>
        <translation>在 {seconds} 秒超时内没有完整应答</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="222"/>
        <source>The server is slow or sends its answer a byte at a time; check the host and port, or raise --timeout for a big local model.</source>
        <translation>服务器太慢，或逐字节发送应答；请检查主机和端口，大型本地模型可调高 --timeout。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="224"/>
        <source>No API answer is that big: the base URL points at something else (a file server, a proxy) or the server is broken.</source>
        <translation>没有哪个 API 应答有这么大：基础 URL 指向了别的东西（文件服务器、代理），或服务器已损坏。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="226"/>
        <source>The server (or a proxy in front of it) compresses its answers in a way no API client expects; check what the base URL points at.</source>
        <translation>服务器（或其前面的代理）以 API 客户端不认识的方式压缩应答；请检查基础 URL 指向的是什么。</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="229"/>
        <source>following {path}</source>
        <translation>正在跟踪 {path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="230"/>
        <source>following {path} (truncated, reading from the start)</source>
        <translation>正在跟踪 {path}（文件被截断，从头读取）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="231"/>
        <source>following journal of {unit}</source>
        <translation>正在跟踪 {unit} 的日志</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="232"/>
        <source>waiting for file {path}</source>
        <translation>正在等待文件 {path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="233"/>
        <source>waiting for a log file in {path}</source>
        <translation>正在等待 {path} 中出现日志文件</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="234"/>
        <source>waiting for directory {path}</source>
        <translation>正在等待目录 {path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="236"/>
        <source>waiting for {url}</source>
        <translation>正在等待 {url}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="237"/>
        <source>waiting for {url} (HTTP {status})</source>
        <translation>正在等待 {url}（HTTP {status}）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="238"/>
        <source>{url} is not a metrics page with request counters (over 4 MB)</source>
        <translation>{url} 不是带请求计数器的指标页面（超过 4 MB）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="239"/>
        <source>{url} has no request counters</source>
        <translation>{url} 没有请求计数器</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="240"/>
        <source>reading the server&apos;s counters at {url}</source>
        <translation>正在读取 {url} 上的服务器计数器</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="241"/>
        <source>from the server&apos;s /metrics: the counters&apos; increase over one finished request</source>
        <translation>来自服务器的 /metrics：一个已完成请求期间计数器的增量</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="243"/>
        <source>from the server&apos;s /metrics: {requests} requests finished between two scrapes; their totals, not split per request</source>
        <translation>来自服务器的 /metrics：两次抓取之间完成了 {requests} 个请求；这是它们的合计，未按请求拆分</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="245"/>
        <source>permission denied: {path}</source>
        <translation>权限不足：{path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="246"/>
        <source>not a file (a directory): {path}</source>
        <translation>不是文件（是目录）：{path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="247"/>
        <source>not a directory: {path}</source>
        <translation>不是目录：{path}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="248"/>
        <source>cannot open {path}: {reason}</source>
        <translation>无法打开 {path}：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="249"/>
        <source>cannot check {path}: {reason}</source>
        <translation>无法检查 {path}：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="250"/>
        <source>cannot read {path}: {reason}</source>
        <translation>无法读取 {path}：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="251"/>
        <source>cannot start {program}: {reason}</source>
        <translation>无法启动 {program}：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="252"/>
        <source>running (pid {pid}): {command}</source>
        <translation>运行中（pid {pid}）：{command}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="253"/>
        <source>stopped (exit code {code})</source>
        <translation>已停止（退出码 {code}）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="254"/>
        <source>process exited (code {code})</source>
        <translation>进程已退出（退出码 {code}）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="255"/>
        <source>cannot start: the command is empty</source>
        <translation>无法启动：命令为空</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="256"/>
        <source>cannot start: command not found: {program}</source>
        <translation>无法启动：找不到命令：{program}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="257"/>
        <source>cannot start: permission denied: {program}</source>
        <translation>无法启动：权限不足：{program}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="258"/>
        <source>journalctl not found: this system has no systemd journal to follow</source>
        <translation>找不到 journalctl：本系统没有可跟踪的 systemd 日志</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="259"/>
        <source>journalctl for {unit} ended: {status}</source>
        <translation>{unit} 的 journalctl 已结束：{status}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="261"/>
        <source>imported {count} profile(s){names}</source>
        <translation>已导入 {count} 个配置{names}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="262"/>
        <source>  {old} already existed, imported as {new}</source>
        <translation>  {old} 已存在，导入为 {new}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="263"/>
        <source>  no API key in the file for: {names} (enter it before use)</source>
        <translation>  文件中没有以下配置的 API 密钥：{names}（使用前请填写）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="264"/>
        <source>not a KV Switch profiles file: {reason}</source>
        <translation>不是 KV Switch 配置文件：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="265"/>
        <source>not a KV Switch profiles file (no &apos;profiles&apos; list)</source>
        <translation>不是 KV Switch 配置文件（没有 &apos;profiles&apos; 列表）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="266"/>
        <source>written by a newer or different program; upgrade KV Switch to read it</source>
        <translation>由更新版本或其他程序写入；请升级 KV Switch 后再读取</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="267"/>
        <source>profile #{index} is not an object</source>
        <translation>第 {index} 个配置不是对象</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="269"/>
        <source>KV cache reuse failed: the whole prompt was processed again</source>
        <translation>KV 缓存复用失败：整个提示被重新处理</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="270"/>
        <source>full re-processing forced: SWA or hybrid/recurrent model without a usable checkpoint</source>
        <translation>被迫完全重新处理：SWA 或混合/循环模型没有可用的检查点</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="272"/>
        <source>the cached prompt and the new one differ (common part does not match fully)</source>
        <translation>缓存的提示与新提示不同（公共部分不完全匹配）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="274"/>
        <source>the cache could not be truncated (hybrid/recurrent model): memory cleared</source>
        <translation>缓存无法截断（混合/循环模型）：记忆已清空</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="276"/>
        <source>a context checkpoint was invalidated</source>
        <translation>一个上下文检查点已失效</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="277"/>
        <source>a context checkpoint could not be restored</source>
        <translation>一个上下文检查点无法恢复</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="278"/>
        <source>restored from a context checkpoint</source>
        <translation>已从上下文检查点恢复</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="279"/>
        <source>the slot&apos;s cached prompt was cleared</source>
        <translation>槽位中缓存的提示已被清除</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="280"/>
        <source>the RAM prompt cache could not be loaded</source>
        <translation>无法加载内存中的提示缓存</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="281"/>
        <source>restored from the host-RAM prompt cache</source>
        <translation>已从主机内存提示缓存恢复</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="282"/>
        <source>chunks reused by KV shifting (--cache-reuse)</source>
        <translation>通过 KV 移位复用了分块（--cache-reuse）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="283"/>
        <source>cache reuse (KV shifting) is not supported by this model</source>
        <translation>此模型不支持缓存复用（KV 移位）</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="284"/>
        <source>one prefill batch of {count} sequences</source>
        <translation>一个预填充批次包含 {count} 个序列</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="286"/>
        <source>not valid JSON: {reason}</source>
        <translation>不是有效的 JSON：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="287"/>
        <source>not valid TOML: {reason}</source>
        <translation>不是有效的 TOML：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="288"/>
        <source>not JSON: {reason}</source>
        <translation>不是 JSON：{reason}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="289"/>
        <source>the key {key} appears twice; keep one of them</source>
        <translation>键 {key} 出现了两次；请只保留一个</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="290"/>
        <source>JSON does not allow comments; remove the comment</source>
        <translation>JSON 不允许注释；请删除注释</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="291"/>
        <source>trailing comma before &apos;}&apos;; remove it</source>
        <translation>&apos;}&apos; 前有多余的逗号；请删除</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="292"/>
        <source>expected a JSON object {...} at the top level, found {kind}</source>
        <translation>顶层应为 JSON 对象 {...}，实际为 {kind}</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="293"/>
        <source>&apos;env&apos; must be an object of NAME: &quot;value&quot; entries</source>
        <translation>&apos;env&apos; 必须是由 NAME: &quot;value&quot; 条目组成的对象</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="294"/>
        <source>&apos;{where}&apos; must be an object to hold &apos;{key}&apos;</source>
        <translation>&apos;{where}&apos; 必须是对象才能容纳 &apos;{key}&apos;</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="295"/>
        <source>&apos;{where}&apos; must be a table to hold &apos;{key}&apos;</source>
        <translation>&apos;{where}&apos; 必须是表才能容纳 &apos;{key}&apos;</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="296"/>
        <source>not UTF-8 text (byte {byte}); save it as UTF-8</source>
        <translation>不是 UTF-8 文本（第 {byte} 字节）；请另存为 UTF-8</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="297"/>
        <source>Expecting property name enclosed in double quotes</source>
        <translation>此处应为双引号括起的属性名</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="298"/>
        <source>Expecting value</source>
        <translation>此处应为一个值</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="299"/>
        <source>Expecting &apos;,&apos; delimiter</source>
        <translation>此处应为 &apos;,&apos; 分隔符</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="300"/>
        <source>Expecting &apos;:&apos; delimiter</source>
        <translation>此处应为 &apos;:&apos; 分隔符</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="301"/>
        <source>Extra data</source>
        <translation>多余的数据</translation>
    </message>
    <message>
        <location filename="../control/engine_templates.py" line="302"/>
        <source>{message}: line {line} column {column} (char {char})</source>
        <translation>{message}：第 {line} 行第 {column} 列（第 {char} 个字符）</translation>
    </message>
</context>
<context>
    <name>ErrorReportDialog</name>
    <message>
        <location filename="../widgets/error_dialog.py" line="34"/>
        <source>Copy report</source>
        <translation>复制报告</translation>
    </message>
</context>
<context>
    <name>FileSessionAlerts</name>
    <message>
        <location filename="../control/session_file_alerts.py" line="92"/>
        <source>Session %1 (%2, %3): its %4 calls read %5 of their prompt from the cache, below %6.</source>
        <extracomment>at most this many low sessions are looked into per pass (each costs one turn-table read)</extracomment>
        <translation>会话 %1（%2，%3）：其 %4 次调用只有 %5 的提示从缓存读取，低于 %6。</translation>
    </message>
    <message>
        <location filename="../control/session_file_alerts.py" line="97"/>
        <source>Likely cause: %1.</source>
        <translation>可能原因：%1。</translation>
    </message>
    <message>
        <location filename="../control/session_file_alerts.py" line="99"/>
        <source>Open the Sessions tab to see where.</source>
        <translation>打开“会话”标签页查看在哪里丢失。</translation>
    </message>
</context>
<context>
    <name>FirstRunDialog</name>
    <message>
        <location filename="../shell/first_run_text.py" line="21"/>
        <source>found</source>
        <translation>已找到</translation>
    </message>
    <message>
        <location filename="../shell/first_run_text.py" line="22"/>
        <source>not there</source>
        <translation>不存在</translation>
    </message>
    <message>
        <location filename="../shell/first_run_text.py" line="30"/>
        <source>Asked on %1, port %2: none answered as a model server.</source>
        <translation>已询问 %1 的端口 %2：没有一个以模型服务器的方式应答。</translation>
    </message>
    <message>
        <location filename="../shell/first_run_text.py" line="34"/>
        <source>Looked for running processes: %1 — none is running.</source>
        <translation>已查找运行中的进程：%1——都没有在运行。</translation>
    </message>
    <message>
        <location filename="../shell/first_run_text.py" line="38"/>
        <source>The process list was not read.</source>
        <translation>未读取进程列表。</translation>
    </message>
    <message>
        <location filename="../shell/first_run_text.py" line="40"/>
        <source>Read %1 (%2): %3.</source>
        <translation>已读取 %1（%2）：%3。</translation>
    </message>
    <message>
        <location filename="../shell/first_run_text.py" line="44"/>
        <source>Looked for CC Switch in %1: %2.</source>
        <translation>已在 %1 查找 CC Switch：%2。</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="89"/>
        <source>Set up KV Switch</source>
        <extracomment>the ticks the user set, by server address: a refill (after &quot;Add selected profiles&quot;, a new scan) keeps a server the user unticked unticked, instead of ticking every answering one again</extracomment>
        <translation>设置 KV Switch</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="99"/>
        <source>KV Switch looked for the coding tools and local model servers on this computer. Pick what to turn into profiles; you can change everything later.</source>
        <translation>KV Switch 已在这台电脑上查找编程工具和本地模型服务器。选择要转换为配置的项目；之后可以随时修改。</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="113"/>
        <source>Coding tools</source>
        <translation>编程工具</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="120"/>
        <source>Import Claude Code&apos;s current settings</source>
        <translation>导入 Claude Code 当前设置</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="122"/>
        <source>Import CC Switch providers</source>
        <translation>导入 CC Switch 提供商</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="129"/>
        <location filename="../shell/first_run.py" line="207"/>
        <source>Details</source>
        <translation>详细信息</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="138"/>
        <source>Local servers</source>
        <translation>本地服务器</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="159"/>
        <source>Detect servers</source>
        <translation>检测服务器</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="161"/>
        <source>Browse presets and cloud vendors…</source>
        <translation>浏览预设和云端厂商…</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="162"/>
        <source>Start from a local server&apos;s defaults or a cloud vendor</source>
        <translation>从本地服务器的默认设置或云端厂商开始</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="164"/>
        <source>Add selected profiles</source>
        <translation>添加所选配置</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="187"/>
        <source>%1: not found</source>
        <translation>%1：未找到</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="189"/>
        <source>not on PATH</source>
        <translation>不在 PATH 中</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="190"/>
        <source>no configuration yet</source>
        <translation>尚无配置</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="191"/>
        <source>%1: %2 — %3</source>
        <translation>%1：%2 — %3</translation>
    </message>
    <message>
        <location filename="../shell/first_run_imports.py" line="58"/>
        <source>Found Claude Code&apos;s settings: import them</source>
        <translation>找到 Claude Code 的设置：导入</translation>
    </message>
    <message>
        <location filename="../shell/first_run_imports.py" line="63"/>
        <source>Found CC Switch: import %1 providers</source>
        <translation>找到 CC Switch：导入 %1 个服务商</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="207"/>
        <source>Hide details</source>
        <translation>隐藏详细信息</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="226"/>
        <source>Looking for running servers…</source>
        <translation>正在查找运行中的服务器…</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="239"/>
        <source>Scan again</source>
        <translation>重新扫描</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="248"/>
        <source>Detection failed: %1</source>
        <translation>检测失败：%1</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="259"/>
        <source>(a profile named “%1” already exists)</source>
        <translation>（已存在名为“%1”的配置）</translation>
    </message>
    <message numerus="yes">
        <location filename="../shell/first_run.py" line="269"/>
        <source>Found %n server(s). Checked ones become profiles with the cache-safe settings and their log already set.</source>
        <translation>
            <numerusform>找到 %n 个服务器。勾选的服务器将成为配置，并已设置缓存安全选项和日志。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="274"/>
        <source>No local server is running. Start one (%1) and press “Scan again”, or start from a preset.</source>
        <translation>本机没有运行中的服务器。启动一个（%1）后点击“重新扫描”，或从预设开始。</translation>
    </message>
    <message>
        <location filename="../shell/first_run.py" line="326"/>
        <source>Added: %1.</source>
        <translation>已添加：%1。</translation>
    </message>
</context>
<context>
    <name>GatewayFields</name>
    <message>
        <location filename="../profiles/gateway_fields.py" line="29"/>
        <source>Through the KV Switch gateway</source>
        <translation>经由 KV Switch 网关</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="31"/>
        <source>The clients are pointed at the local gateway once, with a local token instead of the key; switching between gateway profiles then rewrites no file and reaches running sessions</source>
        <translation>客户端只需指向本地网关一次，使用本地访问凭据代替密钥；之后在网关配置之间切换不会重写任何文件，并会作用于正在运行的会话</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="33"/>
        <source>Stabilise the prompt prefix (local servers only)</source>
        <translation>稳定提示词前缀（仅限本地服务器）</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="35"/>
        <source>The gateway moves Claude Code&apos;s environment block before your first message, the same way on every turn, so a new conversation in a project reuses the server&apos;s cache. Off by default</source>
        <translation>网关在每一轮都以相同方式把 Claude Code 的环境块移到你的第一条消息之前，使同一项目中的新对话能复用服务器的缓存。默认关闭</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="37"/>
        <source>A server slot per conversation (servers with slots)</source>
        <translation>每个对话一个服务器槽位（支持槽位的服务器）</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="39"/>
        <source>For a local server started with several slots and little or no host-RAM cache: each conversation (a session&apos;s own, a subagent&apos;s) keeps its slot, so another one does not overwrite its cached prompt. Claude Code then goes through the chat bridge. Off by default</source>
        <translation>适用于以多个槽位启动、主机内存缓存很少或没有的本地服务器：每个对话（会话自己的或子代理的）保留自己的槽位，其他对话不会覆盖它已缓存的提示词。Claude Code 随后经由 chat 桥接。默认关闭</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="43"/>
        <source>Inline system messages as user messages (local servers only)</source>
        <translation>将内联 system 消息作为 user 消息（仅限本地服务器）</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="45"/>
        <source>For chat templates that refuse a system message after the first (&quot;System message must be at the beginning&quot;): each of Claude Code&apos;s becomes a user message in the same place, the same bytes on every turn. Off by default</source>
        <translation>适用于拒绝首条之后 system 消息的聊天模板（“System message must be at the beginning”）：Claude Code 的每条此类消息在原位置变为 user 消息，每一轮字节相同。默认关闭</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="90"/>
        <source>A bridge works only through the gateway: tick the box above.</source>
        <translation>协议桥接只在经由网关时生效：请勾选上面的选项。</translation>
    </message>
    <message>
        <location filename="../profiles/gateway_fields.py" line="92"/>
        <source>The stabiliser never runs for a cloud backend.</source>
        <translation>前缀稳定器从不用于云端后端。</translation>
    </message>
</context>
<context>
    <name>GatewayOffer</name>
    <message>
        <location filename="../usage/request_log.py" line="283"/>
        <source>No request went through KV Switch&apos;s gateway in this period. Through it, every request gets a cache verdict and, when it misses, the reason.</source>
        <translation>这段时间内没有请求经过 KV Switch 的网关。经过网关时，每个请求都会得到缓存判定，未命中时还会给出原因。</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="287"/>
        <source>Send through the gateway</source>
        <translation>经网关发送</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="288"/>
        <source>Ticks “through the gateway” on the profile and applies it: its clients&apos; files point at the gateway from then on</source>
        <translation>为该配置勾选“经过网关”并应用：此后其客户端的文件指向网关</translation>
    </message>
</context>
<context>
    <name>GatewayReuseAlerts</name>
    <message>
        <location filename="../control/usage_alerts.py" line="57"/>
        <source>The last %1 requests through the gateway (%2) reused less than %3 % of their prompt.</source>
        <extracomment>the smallest prompt cloud vendors cache (the Messages API: 1024 tokens); smaller ones prove nothing</extracomment>
        <translation>经网关的最近 %1 个请求（%2）复用的提示少于 %3 %。</translation>
    </message>
    <message>
        <location filename="../control/usage_alerts.py" line="62"/>
        <source>Open the Usage tab or run Verify to see why.</source>
        <translation>打开“用量”页或运行验证查看原因。</translation>
    </message>
</context>
<context>
    <name>GatewayStatus</name>
    <message>
        <location filename="../usage/gateway_status.py" line="30"/>
        <source>%1 (fallback for %2)</source>
        <translation>%1（%2 的备用）</translation>
    </message>
    <message>
        <location filename="../usage/gateway_status.py" line="43"/>
        <source>Gateway: running at %1</source>
        <translation>网关：运行于 %1</translation>
    </message>
    <message>
        <location filename="../usage/gateway_status.py" line="49"/>
        <source>Gateway: not running (%1)</source>
        <translation>网关：未运行（%1）</translation>
    </message>
    <message>
        <location filename="../usage/gateway_status.py" line="50"/>
        <source>Gateway: not running</source>
        <translation>网关：未运行</translation>
    </message>
</context>
<context>
    <name>HistoryChart</name>
    <message>
        <location filename="../verify/verify_history.py" line="67"/>
        <source>Cache reuse and time to first token per verify run</source>
        <translation>每次验证的缓存复用率与首 token 时间</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="84"/>
        <source>bars: reuse %   line: warm TTFT   (%1 runs, local time)</source>
        <translation>柱：复用率   线：热启动首 token 时间   （%1 次记录，本地时间）</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="86"/>
        <source>No verify runs recorded yet.</source>
        <translation>尚无验证记录。</translation>
    </message>
</context>
<context>
    <name>Kpis</name>
    <message>
        <location filename="../usage/request_log.py" line="83"/>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="83"/>
        <source>Hit rate</source>
        <translation>命中率</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="84"/>
        <source>Tokens re-processed</source>
        <translation>重新处理的 token</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="84"/>
        <source>Time lost</source>
        <translation>损失的时间</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="85"/>
        <source>Not a hit</source>
        <translation>未命中</translation>
    </message>
</context>
<context>
    <name>LibraryController</name>
    <message>
        <location filename="../control/controller_library.py" line="117"/>
        <source>Stored preset “%1” (%2 bytes).</source>
        <translation>已保存预设“%1”（%2 字节）。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="135"/>
        <source>Nothing to import: no memory file or preset was found.</source>
        <translation>没有可导入的内容：未找到记忆文件或预设。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="144"/>
        <source>Forgot preset “%1”; memory files holding its text keep it.</source>
        <translation>已删除预设“%1”；含有其文本的记忆文件保持不变。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="248"/>
        <location filename="../control/controller_library.py" line="276"/>
        <source>Installed skill “%1” from %2.</source>
        <translation>已从 %2 安装技能“%1”。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="278"/>
        <source>CC Switch holds no skills.</source>
        <translation>CC Switch 中没有技能。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="294"/>
        <source>Updated skill “%1” from %2.</source>
        <translation>已从 %2 更新技能“%1”。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="305"/>
        <source>A skill&apos;s line sits in every request&apos;s prefix: a client that is running re-processes its prompt from there on at its next request.</source>
        <translation>技能的那一行位于每个请求的前缀中：正在运行的客户端会在下一个请求时从那里起重新处理其提示。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="318"/>
        <source>Another change is still being made; try again in a moment.</source>
        <translation>另一项更改仍在进行中；请稍后再试。</translation>
    </message>
    <message>
        <location filename="../control/controller_library.py" line="343"/>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
</context>
<context>
    <name>LibraryView</name>
    <message>
        <location filename="../library/library_view.py" line="38"/>
        <source>Prompts</source>
        <translation>提示词</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="39"/>
        <source>Skills</source>
        <translation>技能</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="71"/>
        <source>Nothing was changed: %1</source>
        <translation>未做任何更改：%1</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="79"/>
        <source>Wrote preset “%1” to %2. Each client&apos;s next request re-processes its prompt from the memory file on.</source>
        <translation>已将预设“%1”写入 %2。每个客户端的下一个请求会从记忆文件处起重新处理其提示。</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="83"/>
        <source>Preset “%1” is there already; nothing changed.</source>
        <translation>预设“%1”已在其中；未做任何更改。</translation>
    </message>
</context>
<context>
    <name>LintPanel</name>
    <message>
        <location filename="../profiles/lint_panel.py" line="80"/>
        <source>Fix</source>
        <translation>修复</translation>
    </message>
    <message>
        <location filename="../profiles/lint_panel.py" line="81"/>
        <source>Add %1 to the profile</source>
        <translation>将 %1 添加到配置</translation>
    </message>
</context>
<context>
    <name>LogPanel</name>
    <message>
        <location filename="../logs/log_panel.py" line="119"/>
        <source>Follow</source>
        <translation>跟随</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="121"/>
        <source>Keep the newest line in view while you are at the bottom</source>
        <translation>位于底部时，始终显示最新一行</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="122"/>
        <source>Cache lines only</source>
        <translation>仅缓存相关行</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="123"/>
        <source>Pause</source>
        <translation>暂停</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="125"/>
        <source>Search (Enter: next, Shift+Enter: previous)</source>
        <translation>搜索（回车：下一个，Shift+回车：上一个）</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="127"/>
        <source>Copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="128"/>
        <source>Copy the selection, or every shown line if nothing is selected</source>
        <translation>复制所选内容；未选择时复制所有显示的行</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="129"/>
        <source>Clear</source>
        <translation>清空</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="182"/>
        <location filename="../logs/log_sources.py" line="29"/>
        <source>No log source: set one in the active profile&apos;s “Server log” field.</source>
        <translation>没有日志来源：请在活动配置的“服务器日志”字段中设置。</translation>
    </message>
    <message>
        <location filename="../logs/log_panel.py" line="263"/>
        <source>The log has a line per request: the server&apos;s counters are no longer read (they would list the same requests twice).</source>
        <translation>日志中每个请求都有一行：不再读取服务器的计数器（否则同一请求会列出两次）。</translation>
    </message>
    <message>
        <location filename="../logs/log_sources.py" line="23"/>
        <source>A cloud API has no server log by nature: the vendor runs the server. Its requests through the gateway, with their cache verdicts, are in the Usage tab.</source>
        <translation>云端 API 本来就没有服务器日志：服务器由服务商运行。经过网关的请求及其缓存判定在“用量”标签页中。</translation>
    </message>
    <message>
        <location filename="../logs/log_sources.py" line="27"/>
        <source>Reading the server&apos;s counters at %1 (its log has no per-request cache line)</source>
        <translation>正在读取 %1 上的服务器计数器（其日志没有逐请求的缓存行）</translation>
    </message>
    <message>
        <location filename="../logs/log_sources.py" line="21"/>
        <source>Opening %1…</source>
        <extracomment>the name lupdate looks for: each text below is in the ``LogPanel`` context of the translations</extracomment>
        <translation>正在打开 %1…</translation>
    </message>
    <message>
        <location filename="../logs/log_text_actions.py" line="50"/>
        <source>“%1” is not in the shown lines.</source>
        <translation>显示的行中没有“%1”。</translation>
    </message>
    <message>
        <location filename="../logs/log_sources.py" line="36"/>
        <source>journald unit %1</source>
        <translation>journald 单元 %1</translation>
    </message>
</context>
<context>
    <name>MainWindow</name>
    <message>
        <location filename="../profiles/profile_column.py" line="99"/>
        <source>Pick a server or vendor (the arrow: an empty form of one kind)</source>
        <translation>选择一个服务器或服务商（箭头：某一类型的空白表单）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="105"/>
        <source>Remove</source>
        <translation>删除</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="106"/>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="107"/>
        <source>Open the selected profile in the editor beside the list (Ctrl+E)</source>
        <translation>在列表旁的编辑器中打开所选配置（Ctrl+E）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="177"/>
        <source>No profile writes %1. Choose All to see all %2.</source>
        <translation>没有写入 %1 的配置。选择“全部”查看全部 %2 个。</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="118"/>
        <source>Profiles</source>
        <translation>配置</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="182"/>
        <source>No profile matches “%1”. Clear the filter to see all %2.</source>
        <translation>没有与“%1”匹配的配置。清除筛选即可看到全部 %2 个。</translation>
    </message>
    <message>
        <location filename="../shell/window_tabs.py" line="45"/>
        <source>Cache log</source>
        <translation>缓存日志</translation>
    </message>
    <message>
        <location filename="../shell/window_tabs.py" line="46"/>
        <source>Verify</source>
        <translation>验证</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="35"/>
        <source>Actions</source>
        <translation>操作</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="38"/>
        <source>Review and apply…</source>
        <translation>查看更改并应用…</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="40"/>
        <source>Undo last apply</source>
        <translation>撤销上次应用</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="41"/>
        <source>Verify cache</source>
        <translation>验证缓存</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="48"/>
        <source>Save profile</source>
        <translation>保存配置</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="51"/>
        <source>Edit profile</source>
        <translation>编辑配置</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="54"/>
        <location filename="../shell/window_actions.py" line="60"/>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="56"/>
        <source>From Claude Code settings</source>
        <translation>从 Claude Code 设置导入</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="58"/>
        <source>From CC Switch</source>
        <translation>从 CC Switch 导入</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="63"/>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="73"/>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="76"/>
        <source>Settings…</source>
        <translation>设置…</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="78"/>
        <source>Setup assistant…</source>
        <translation>设置向导…</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="207"/>
        <source>Cannot apply “%1”: %2</source>
        <translation>无法应用“%1”：%2</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="277"/>
        <source>Remove profile</source>
        <translation>删除配置</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="278"/>
        <source>Remove the profile “%1”? Files it was applied to keep their values until you switch or undo.</source>
        <translation>删除配置“%1”？已写入的文件会保留其值，直到你切换或撤销。</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="68"/>
        <source>Saved “%1”.</source>
        <translation>已保存“%1”。</translation>
    </message>
    <message>
        <location filename="../shell/window_editor.py" line="96"/>
        <source>Get started</source>
        <translation>开始使用</translation>
    </message>
    <message>
        <location filename="../shell/window_editor.py" line="98"/>
        <source>New profile</source>
        <translation>新配置</translation>
    </message>
    <message>
        <location filename="../shell/window_editor.py" line="100"/>
        <source>Edit “%1”</source>
        <translation>编辑“%1”</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="85"/>
        <source>Switched %2 to “%1” instantly through the gateway: no file rewritten; running sessions follow from their next request.</source>
        <translation>已通过网关将 %2 即时切换到“%1”：没有重写文件；正在运行的会话从下一个请求起跟随。</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="88"/>
        <source>Switched %2 to “%1”: files written; new sessions use it.</source>
        <translation>已将 %2 切换到“%1”：文件已写入；新会话将使用它。</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="90"/>
        <source>Open shells need to re-read their rc file.</source>
        <translation>已打开的 shell 需要重新读取其 rc 文件。</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="88"/>
        <location filename="../shell/window_messages.py" line="56"/>
        <location filename="../shell/window_messages.py" line="92"/>
        <source>Review changes</source>
        <translation>查看更改</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="124"/>
        <source>Prompts and skills</source>
        <translation>提示词与技能</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="115"/>
        <source>But nothing answers at %1:%2 yet: start the server before the next request.</source>
        <translation>但 %1:%2 还没有任何响应：请在下一个请求之前启动服务器。</translation>
    </message>
    <message>
        <location filename="../library/library_view.py" line="91"/>
        <location filename="../shell/window_messages.py" line="59"/>
        <location filename="../shell/window_messages.py" line="95"/>
        <source>Undo</source>
        <translation>撤销</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="61"/>
        <source>Apply to them</source>
        <translation>应用到这些客户端</translation>
    </message>
    <message>
        <location filename="../shell/window_messages.py" line="96"/>
        <source>the clients</source>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="312"/>
        <source>“%1” was not applied; nothing was changed. %2</source>
        <translation>未应用“%1”，没有任何修改。%2</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="326"/>
        <source>Re-apply profile</source>
        <translation>重新应用配置</translation>
    </message>
    <message>
        <location filename="../shell/main_window.py" line="327"/>
        <source>The fix was added to “%1”. Apply the profile again now so new sessions use it?</source>
        <translation>修复已添加到“%1”。现在重新应用该配置，让新会话使用它吗？</translation>
    </message>
    <message>
        <location filename="../shell/window_dialogs.py" line="89"/>
        <source>Added %1 profile(s): %2. Click “Use” on one to switch to it.</source>
        <translation>已添加 %1 个配置：%2。点击其中一个的“使用”即可切换。</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="86"/>
        <source>Filter profiles (Ctrl+F)</source>
        <extracomment>the panel is open only for the welcome (nobody asked for the form): it closes with a first profile</extracomment>
        <translation>筛选配置（Ctrl+F）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="98"/>
        <location filename="../shell/window_actions.py" line="43"/>
        <source>New profile…</source>
        <translation>新建配置…</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="45"/>
        <source>Find profile</source>
        <translation>查找配置</translation>
    </message>
    <message>
        <location filename="../shell/window_actions.py" line="97"/>
        <source>From a server or vendor…</source>
        <translation>从服务器或服务商…</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="206"/>
        <source>Copied “%1” as “%2”.</source>
        <translation>已将“%1”复制为“%2”。</translation>
    </message>
    <message>
        <location filename="../profiles/profile_column.py" line="235"/>
        <source>Add the API key if the backend needs one, then Save.</source>
        <translation>如后端需要，请填写 API 密钥，然后保存。</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="331"/>
        <source>Usage</source>
        <translation>用量</translation>
    </message>
    <message>
        <location filename="../shell/shell.py" line="266"/>
        <source>Language changed.</source>
        <translation>语言已切换。</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="247"/>
        <source>MCP</source>
        <translation>MCP</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="260"/>
        <source>Sessions</source>
        <translation>会话</translation>
    </message>
</context>
<context>
    <name>McpController</name>
    <message>
        <location filename="../control/controller_mcp.py" line="125"/>
        <source>enabled %1 in %2</source>
        <extracomment>per client, what the server was measured to add to every request (``kvswitch mcp measure``); a client never measured is absent (shown as unknown) per client, the measurement&apos;s whole sentence (when, with which client version, on which server)</extracomment>
        <translation>已在 %2 中启用 %1</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="125"/>
        <source>disabled %1 in %2</source>
        <translation>已在 %2 中停用 %1</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="141"/>
        <source>enabled every server in %1</source>
        <translation>已在 %1 中启用所有服务器</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="141"/>
        <source>disabled every server in %1</source>
        <translation>已在 %1 中停用所有服务器</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="147"/>
        <source>removed %1</source>
        <translation>已移除 %1</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="197"/>
        <source>added %1</source>
        <translation>已添加 %1</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="197"/>
        <source>changed %1</source>
        <translation>已修改 %1</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="247"/>
        <source>%1 tokens, the last prompt the gateway recorded for it</source>
        <translation>%1 个 token，即网关为它记录的最近一次提示词</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="248"/>
        <source>a size the gateway has not recorded</source>
        <translation>网关尚未记录其大小</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="251"/>
        <source>Claude Code is running: with ENABLE_TOOL_SEARCH=false its next request re-processes its whole prompt (%1); with tool search on (its default) the tools come after the conversation and the cache is kept.</source>
        <translation>Claude Code 正在运行：若 ENABLE_TOOL_SEARCH=false，它的下一个请求会重新处理整个提示词（%1）；若开启工具搜索（默认），新工具排在对话之后，缓存得以保留。</translation>
    </message>
    <message>
        <location filename="../control/controller_mcp.py" line="256"/>
        <source>%1 is running: its next request&apos;s tool list changes, so the server may re-process up to its whole prompt (%2).</source>
        <translation>%1 正在运行：它下一个请求的工具列表会改变，服务器可能要重新处理最多整个提示词（%2）。</translation>
    </message>
</context>
<context>
    <name>McpForm</name>
    <message>
        <location filename="../mcp/mcp_form.py" line="48"/>
        <source>%1, line %2: write NAME=VALUE</source>
        <translation>%1 第 %2 行：请写成 NAME=VALUE</translation>
    </message>
</context>
<context>
    <name>McpPage</name>
    <message>
        <location filename="../mcp/mcp_page.py" line="46"/>
        <source>Claude Code (project %1)</source>
        <translation>Claude Code（项目 %1）</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="90"/>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="94"/>
        <source>From Claude Code</source>
        <translation>从 Claude Code</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="95"/>
        <source>From Codex</source>
        <translation>从 Codex</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="96"/>
        <source>From OpenCode</source>
        <translation>从 OpenCode</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="97"/>
        <source>From CC Switch</source>
        <translation>从 CC Switch</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="100"/>
        <source>Paste JSON or TOML…</source>
        <translation>粘贴 JSON 或 TOML…</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="102"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="104"/>
        <source>Add…</source>
        <translation>添加…</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="106"/>
        <source>Edit…</source>
        <translation>编辑…</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="109"/>
        <source>MCP servers, and the clients each is written into</source>
        <translation>MCP 服务器，以及每个服务器写入的客户端</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="132"/>
        <source>Server</source>
        <translation>服务器</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="132"/>
        <source>Transport</source>
        <translation>传输方式</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="132"/>
        <source>Command or URL</source>
        <translation>命令或 URL</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="151"/>
        <source>No MCP servers yet: import them from a client, CC Switch or pasted JSON/TOML, or add one with &apos;kvswitch mcp add&apos;.</source>
        <translation>还没有 MCP 服务器：从客户端、CC Switch 或粘贴的 JSON/TOML 导入，或用 &apos;kvswitch mcp add&apos; 添加一个。</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="165"/>
        <source>%1 tokens</source>
        <translation>%1 个 token</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="166"/>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="167"/>
        <source>Adds %1 to every request.</source>
        <translation>为每个请求增加 %1。</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="169"/>
        <source>Tokens it adds to every request: unknown until measured with &apos;kvswitch mcp measure&apos;.</source>
        <translation>它为每个请求增加的 token 数：用 &apos;kvswitch mcp measure&apos; 测量之前未知。</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="174"/>
        <source>Enabled, but not in the client&apos;s file (an undo took it out): check it to write it again</source>
        <translation>已启用，但不在该客户端的文件中（被撤销移除）：勾选即可再次写入</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="185"/>
        <source>Writing…</source>
        <translation>正在写入…</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="190"/>
        <source>Done: %1. Undo takes it back.</source>
        <translation>完成：%1。撤销可将其还原。</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="190"/>
        <source>Done.</source>
        <translation>完成。</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="195"/>
        <source>Nothing was changed: %1</source>
        <translation>未做任何更改：%1</translation>
    </message>
</context>
<context>
    <name>McpServerDialog</name>
    <message>
        <location filename="../mcp/mcp_form.py" line="59"/>
        <source>Add MCP server</source>
        <translation>添加 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="59"/>
        <source>Edit MCP server</source>
        <translation>编辑 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="64"/>
        <source>Command (stdio)</source>
        <translation>命令（stdio）</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="64"/>
        <source>Streamable HTTP</source>
        <translation>可流式 HTTP</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="65"/>
        <source>SSE (older HTTP)</source>
        <translation>SSE（旧版 HTTP）</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="69"/>
        <source>arguments, as a shell would split them</source>
        <translation>参数，按 shell 的方式分隔</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="83"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="84"/>
        <source>Transport</source>
        <translation>传输方式</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="85"/>
        <source>Command</source>
        <translation>命令</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="86"/>
        <source>Arguments</source>
        <translation>参数</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="87"/>
        <location filename="../mcp/mcp_form.py" line="138"/>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="88"/>
        <source>URL</source>
        <translation>URL</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="89"/>
        <location filename="../mcp/mcp_form.py" line="140"/>
        <source>Headers</source>
        <translation>请求头</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="90"/>
        <source>Enabled in</source>
        <translation>启用于</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_form.py" line="91"/>
        <source>Values are secrets: shown masked; a value left masked is kept.</source>
        <translation>值均为机密：以掩码显示；保持掩码的值将保留原值。</translation>
    </message>
</context>
<context>
    <name>MessageBar</name>
    <message>
        <location filename="../widgets/message_bar.py" line="40"/>
        <source>Dismiss</source>
        <extracomment>a button the message offers: (key, text, what it does)</extracomment>
        <translation>关闭</translation>
    </message>
</context>
<context>
    <name>ModelMapBox</name>
    <message>
        <location filename="../profiles/profile_models.py" line="58"/>
        <source>Models per role (Claude Code)</source>
        <translation>按角色指定模型（Claude Code）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="62"/>
        <source>Opus</source>
        <translation>Opus</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="62"/>
        <source>Sonnet</source>
        <translation>Sonnet</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="62"/>
        <source>Haiku</source>
        <translation>Haiku</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="63"/>
        <source>Subagent</source>
        <translation>子代理</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="63"/>
        <source>Small/fast</source>
        <translation>小型/快速</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="72"/>
        <source>same as Model</source>
        <translation>与“模型”相同</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="77"/>
        <source>Fetch models</source>
        <translation>获取模型列表</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="78"/>
        <source>List the models the backend serves (/v1/models)</source>
        <translation>列出后端提供的模型（/v1/models）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="79"/>
        <source>Test connection</source>
        <translation>测试连接</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="80"/>
        <source>Send one small request and explain any failure</source>
        <translation>发送一个小请求，并解释任何失败原因</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="127"/>
        <source>Failed: %1</source>
        <translation>失败：%1</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="141"/>
        <source>Asking %1 for its models…</source>
        <translation>正在向 %1 查询模型…</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="147"/>
        <source>%1 model(s) served: %2</source>
        <translation>提供 %1 个模型：%2</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="148"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../profiles/profile_models.py" line="159"/>
        <source>Testing %1…</source>
        <translation>正在测试 %1…</translation>
    </message>
</context>
<context>
    <name>PasteDialog</name>
    <message>
        <location filename="../mcp/mcp_page.py" line="55"/>
        <source>Paste MCP servers</source>
        <translation>粘贴 MCP 服务器</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="58"/>
        <source>{&quot;mcpServers&quot;: {...}}, {&quot;mcp&quot;: {...}} or [mcp_servers.NAME] tables</source>
        <translation>{&quot;mcpServers&quot;: {...}}、{&quot;mcp&quot;: {...}} 或 [mcp_servers.NAME] 表</translation>
    </message>
    <message>
        <location filename="../mcp/mcp_page.py" line="60"/>
        <source>Replace servers of the same name</source>
        <translation>替换同名的服务器</translation>
    </message>
</context>
<context>
    <name>PresetGallery</name>
    <message>
        <location filename="../profiles/gallery.py" line="72"/>
        <source>Add a profile</source>
        <extracomment>each entry&apos;s starting profile data (a dict for ``Profile.model_validate`` without a name)</extracomment>
        <translation>添加配置</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="77"/>
        <source>Search servers and vendors (name, URL, model)</source>
        <translation>搜索服务器和服务商（名称、URL、模型）</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="84"/>
        <source>Looking for servers running on this machine…</source>
        <translation>正在查找本机上运行的服务器…</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="87"/>
        <source>Use this</source>
        <translation>使用此项</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="93"/>
        <source>Running on this machine</source>
        <translation>本机正在运行</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="157"/>
        <source>Local servers (default ports)</source>
        <translation>本地服务器（默认端口）</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="163"/>
        <source>Cloud vendors</source>
        <translation>云端服务商</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="194"/>
        <source>model not reported</source>
        <translation>未报告模型</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="198"/>
        <source>%1 server(s) running on this machine.</source>
        <translation>本机有 %1 个服务器正在运行。</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="199"/>
        <source>No server is running on this machine right now.</source>
        <translation>本机当前没有运行中的服务器。</translation>
    </message>
    <message>
        <location filename="../profiles/gallery.py" line="204"/>
        <source>Detection failed: %1</source>
        <translation>检测失败：%1</translation>
    </message>
</context>
<context>
    <name>PresetTextDialog</name>
    <message>
        <location filename="../library/library_dialogs.py" line="63"/>
        <source>New prompt preset</source>
        <translation>新建提示词预设</translation>
    </message>
    <message>
        <location filename="../library/library_dialogs.py" line="66"/>
        <source>The memory file&apos;s text (Markdown)</source>
        <translation>记忆文件的文本（Markdown）</translation>
    </message>
    <message>
        <location filename="../library/library_dialogs.py" line="68"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../library/library_dialogs.py" line="69"/>
        <source>Text</source>
        <translation>文本</translation>
    </message>
</context>
<context>
    <name>ProfileButtons</name>
    <message>
        <location filename="../profiles/profile_panel.py" line="61"/>
        <source>Duplicate</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../profiles/profile_panel.py" line="64"/>
        <source>Move up (Alt+Up)</source>
        <translation>上移（Alt+Up）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_panel.py" line="66"/>
        <source>Move up</source>
        <translation>上移</translation>
    </message>
    <message>
        <location filename="../profiles/profile_panel.py" line="69"/>
        <source>Move down (Alt+Down)</source>
        <translation>下移（Alt+Down）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_panel.py" line="71"/>
        <source>Move down</source>
        <translation>下移</translation>
    </message>
</context>
<context>
    <name>ProfileCard</name>
    <message>
        <location filename="../profiles/profile_card.py" line="83"/>
        <source>just now</source>
        <extracomment>below the three lines, so the &quot;Use&quot; button stays under the second one, whose line runs full width</extracomment>
        <translation>刚刚</translation>
    </message>
    <message>
        <location filename="../profiles/profile_card.py" line="84"/>
        <source>%1 d ago</source>
        <translation>%1 天前</translation>
    </message>
    <message>
        <location filename="../profiles/profile_card.py" line="85"/>
        <source>%1 h ago</source>
        <translation>%1 小时前</translation>
    </message>
    <message>
        <location filename="../profiles/profile_card.py" line="86"/>
        <source>%1 min ago</source>
        <translation>%1 分钟前</translation>
    </message>
    <message>
        <location filename="../profiles/profile_card.py" line="96"/>
        <source>not verified yet</source>
        <translation>尚未验证</translation>
    </message>
    <message>
        <location filename="../profiles/profile_card.py" line="109"/>
        <source>default model</source>
        <translation>默认模型</translation>
    </message>
    <message>
        <location filename="../profiles/profile_card.py" line="184"/>
        <location filename="../profiles/profile_card.py" line="385"/>
        <source>Use</source>
        <translation>使用</translation>
    </message>
    <message>
        <location filename="../profiles/card_badges.py" line="42"/>
        <source>%1 (project)</source>
        <translation>%1（项目）</translation>
    </message>
    <message>
        <location filename="../profiles/card_badges.py" line="67"/>
        <source>Written for %1; not running it now</source>
        <translation>为 %1 写入；%1 现在没有在用它</translation>
    </message>
    <message>
        <location filename="../profiles/card_badges.py" line="70"/>
        <source>Its clients go through the KV Switch gateway</source>
        <translation>它的客户端经由 KV Switch 网关</translation>
    </message>
    <message>
        <location filename="../profiles/card_badges.py" line="71"/>
        <source>Gateway</source>
        <translation>网关</translation>
    </message>
    <message>
        <location filename="../profiles/card_badges.py" line="84"/>
        <source>%1 hit · %2 requests</source>
        <translation>命中 %1 · %2 个请求</translation>
    </message>
</context>
<context>
    <name>ProfileEditor</name>
    <message>
        <location filename="../profiles/env_block.py" line="21"/>
        <source>line %1: expected KEY=value</source>
        <translation>第 %1 行：应为 KEY=value</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="82"/>
        <source>Use preset</source>
        <translation>使用预设</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="83"/>
        <source>Fill the base URL, env block and log source for this kind</source>
        <translation>为此类型填入基础 URL、环境变量和日志来源</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="89"/>
        <location filename="../profiles/vendor_hint.py" line="43"/>
        <source>optional</source>
        <translation>可选</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="91"/>
        <location filename="../profiles/profile_editor.py" line="356"/>
        <source>Show</source>
        <translation>显示</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="93"/>
        <source>Show or hide the API key</source>
        <translation>显示或隐藏 API 密钥</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="98"/>
        <source>Allow risky environment variables (PATH, LD_*, PROMPT_COMMAND, NODE_OPTIONS…)</source>
        <translation>允许有风险的环境变量（PATH、LD_*、PROMPT_COMMAND、NODE_OPTIONS…）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="100"/>
        <source>They change how shells, the loader or Claude Code run programs; tick only if you set them on purpose</source>
        <translation>它们会改变 shell、加载器或 Claude Code 运行程序的方式；仅在你有意设置时勾选</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="111"/>
        <source>Kind</source>
        <translation>类型</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="112"/>
        <source>Name</source>
        <translation>名称</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="113"/>
        <source>Base URL</source>
        <translation>基础 URL</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="122"/>
        <source>API key</source>
        <translation>API 密钥</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="126"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="127"/>
        <source>Environment</source>
        <translation>环境变量</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="136"/>
        <source>Write to</source>
        <translation>写入到</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="138"/>
        <source>Gateway</source>
        <translation>网关</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="139"/>
        <source>Server log</source>
        <translation>服务器日志</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="143"/>
        <source>Save</source>
        <translation>保存</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="145"/>
        <source>Revert</source>
        <translation>还原</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="325"/>
        <source>a profile with this name already exists</source>
        <translation>已存在同名配置</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="356"/>
        <source>Hide</source>
        <translation>隐藏</translation>
    </message>
    <message>
        <location filename="../profiles/profile_editor.py" line="118"/>
        <source>The variable the key goes in; the vendor&apos;s docs say which</source>
        <translation>密钥写入的变量；以服务商文档为准</translation>
    </message>
    <message>
        <location filename="../profiles/vendor_hint.py" line="50"/>
        <source>required</source>
        <translation>必填</translation>
    </message>
    <message>
        <location filename="../profiles/vendor_hint.py" line="52"/>
        <source>%1: a key is required — &lt;a href=&quot;%2&quot;&gt;get one&lt;/a&gt;</source>
        <translation>%1：需要密钥 — &lt;a href=&quot;%2&quot;&gt;去获取&lt;/a&gt;</translation>
    </message>
    <message>
        <location filename="../profiles/vendor_hint.py" line="56"/>
        <source>%1: a key is required</source>
        <translation>%1：需要密钥</translation>
    </message>
    <message>
        <location filename="../profiles/log_field.py" line="26"/>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <location filename="../profiles/log_field.py" line="28"/>
        <source>log file, directory, systemd unit or server command</source>
        <translation>日志文件、目录、systemd 单元或服务器命令</translation>
    </message>
</context>
<context>
    <name>ProfileIdentity</name>
    <message>
        <location filename="../profiles/identity.py" line="47"/>
        <source>Anthropic (Claude API)</source>
        <translation>Anthropic（Claude API）</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="48"/>
        <source>Cloud API or gateway (by URL)</source>
        <translation>云端 API 或网关（按 URL）</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="49"/>
        <source>llama.cpp (llama-server)</source>
        <translation>llama.cpp（llama-server）</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="50"/>
        <source>LM Studio</source>
        <translation>LM Studio</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="51"/>
        <source>vLLM</source>
        <translation>vLLM</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="52"/>
        <source>SGLang</source>
        <translation>SGLang</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="53"/>
        <source>Ollama</source>
        <translation>Ollama</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="54"/>
        <source>Other server (custom URL)</source>
        <translation>其他服务器（自定义 URL）</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="64"/>
        <source>Anthropic&apos;s own API (Claude Code&apos;s default backend).</source>
        <translation>Anthropic 自己的 API（Claude Code 的默认后端）。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="65"/>
        <source>Anything else; nothing is pre-filled.</source>
        <translation>其他任何服务；不预填任何内容。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="66"/>
        <source>llama-server; run it with --log-file to let KV Switch follow its log.</source>
        <translation>llama-server；加上 --log-file 运行，KV Switch 即可跟踪它的日志。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="68"/>
        <source>LM Studio&apos;s local server; logs in ~/.lmstudio/server-logs.</source>
        <translation>LM Studio 的本地服务器；日志在 ~/.lmstudio/server-logs。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="70"/>
        <source>Ollama (0.30+ runs llama-server internally).</source>
        <translation>Ollama（0.30 及以上版本内部运行 llama-server）。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="71"/>
        <source>Any gateway speaking the OpenAI API (Codex) or Anthropic API (Claude Code).</source>
        <translation>任何支持 OpenAI API（Codex）或 Anthropic API（Claude Code）的网关。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="73"/>
        <source>SGLang; start it with --enable-cache-report to see cached tokens.</source>
        <translation>SGLang；用 --enable-cache-report 启动才能看到缓存的 token。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="75"/>
        <source>vLLM (optionally with LMCache).</source>
        <translation>vLLM（可搭配 LMCache）。</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="83"/>
        <source>Anthropic API</source>
        <translation>Anthropic API</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="84"/>
        <source>OpenAI Chat API</source>
        <translation>OpenAI Chat API</translation>
    </message>
    <message>
        <location filename="../profiles/identity.py" line="85"/>
        <source>OpenAI Responses API</source>
        <translation>OpenAI Responses API</translation>
    </message>
</context>
<context>
    <name>ProfileListModel</name>
    <message>
        <location filename="../profiles/profile_model.py" line="160"/>
        <source> (active)</source>
        <extracomment>the latest recorded verify of the row&apos;s profile (a ``HistoryEntry``) or None the clients running the row&apos;s profile now (``LiveClient``s, maybe marked ``differs``), [] for none the gateway&apos;s usage of the row&apos;s profile (``requests``, ``hit_rate``...) or None without any</extracomment>
        <translation>（活动）</translation>
    </message>
    <message>
        <location filename="../profiles/profile_model.py" line="169"/>
        <source>%1, active</source>
        <translation>%1，活动</translation>
    </message>
</context>
<context>
    <name>PromptsPage</name>
    <message>
        <location filename="../library/library_dialogs.py" line="99"/>
        <source>Preset name</source>
        <translation>预设名称</translation>
    </message>
    <message>
        <location filename="../library/library_dialogs.py" line="106"/>
        <source>%1

Replace it anyway? A backup is kept, and Undo puts the file back as it is now.</source>
        <translation>%1

仍要替换吗？会保留备份，“撤销”会把文件恢复为现在的样子。</translation>
    </message>
    <message>
        <location filename="../library/library_dialogs.py" line="110"/>
        <source>Replace a hand-edited memory file?</source>
        <translation>替换手动编辑过的记忆文件？</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="49"/>
        <source>~%1 tokens (counted by %2)</source>
        <translation>约 %1 个 token（由 %2 计数）</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="51"/>
        <source>unknown (%1)</source>
        <translation>未知（%1）</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="73"/>
        <source>Preset</source>
        <translation>预设</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="73"/>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="73"/>
        <location filename="../library/prompts_page.py" line="77"/>
        <source>Tokens in every request</source>
        <translation>每个请求中的 token</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="74"/>
        <source>In use by</source>
        <translation>使用者</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="74"/>
        <source>From</source>
        <translation>来源</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="76"/>
        <source>Client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="76"/>
        <source>Memory file</source>
        <translation>记忆文件</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="76"/>
        <source>Holds</source>
        <translation>内容</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="80"/>
        <source>Add</source>
        <translation>添加</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="83"/>
        <source>From a file…</source>
        <translation>从文件…</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="84"/>
        <source>Type or paste text…</source>
        <translation>输入或粘贴文本…</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="87"/>
        <source>Import</source>
        <translation>导入</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="90"/>
        <source>Every client&apos;s memory file</source>
        <translation>每个客户端的记忆文件</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="91"/>
        <source>From Claude Code</source>
        <translation>从 Claude Code</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="91"/>
        <source>From Codex</source>
        <translation>从 Codex</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="92"/>
        <source>From OpenCode</source>
        <translation>从 OpenCode</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="93"/>
        <source>From CC Switch</source>
        <translation>从 CC Switch</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="97"/>
        <source>Use for…</source>
        <translation>用于…</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="99"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="101"/>
        <source>Copy to…</source>
        <translation>复制到…</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="104"/>
        <source>Prompt presets: the text of a memory file, kept by name</source>
        <translation>提示词预设：按名称保存的记忆文件文本</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="108"/>
        <source>Memory files: each client adds its file to every request</source>
        <translation>记忆文件：每个客户端都会把自己的文件加入每个请求</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="126"/>
        <source>%1 bytes</source>
        <translation>%1 字节</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="146"/>
        <source>cannot be read</source>
        <translation>无法读取</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="148"/>
        <source>absent</source>
        <translation>不存在</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="150"/>
        <source>preset “%1”</source>
        <translation>预设“%1”</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="152"/>
        <source>preset “%1”&apos;s text, not written by KV Switch</source>
        <translation>预设“%1”的文本，但不是 KV Switch 写入的</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="153"/>
        <source>its own text (not written by KV Switch, or edited since)</source>
        <translation>自有文本（不是 KV Switch 写入的，或之后被编辑过）</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="204"/>
        <source>Use preset “%1”</source>
        <translation>使用预设“%1”</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="205"/>
        <source>Write it as the memory file of:</source>
        <translation>将其写为以下客户端的记忆文件：</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="212"/>
        <source>Copy %1&apos;s memory file</source>
        <translation>复制 %1 的记忆文件</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="213"/>
        <source>Write the same text as the memory file of:</source>
        <translation>将相同文本写为以下客户端的记忆文件：</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="223"/>
        <source>Add a preset from a file</source>
        <translation>从文件添加预设</translation>
    </message>
    <message>
        <location filename="../library/prompts_page.py" line="224"/>
        <source>Markdown or text (*.md *.txt);;Any file (*)</source>
        <translation>Markdown 或文本 (*.md *.txt);;任意文件 (*)</translation>
    </message>
</context>
<context>
    <name>RequestLog</name>
    <message>
        <location filename="../usage/request_log.py" line="231"/>
        <source>Prompt tokens by cache tier: %1</source>
        <translation>按缓存层划分的提示 token：%1</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="122"/>
        <source>All clients</source>
        <translation>全部客户端</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="123"/>
        <source>All profiles</source>
        <translation>全部配置</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="124"/>
        <source>All sessions</source>
        <translation>全部会话</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="125"/>
        <source>Any verdict</source>
        <translation>任意判定</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="129"/>
        <location filename="../usage/request_log.py" line="132"/>
        <source>Session</source>
        <translation>会话</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="129"/>
        <location filename="../usage/request_log.py" line="132"/>
        <source>Client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="129"/>
        <source>Profiles</source>
        <translation>配置</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="130"/>
        <source>Requests</source>
        <translation>请求</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="130"/>
        <source>Hit %</source>
        <translation>命中 %</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="130"/>
        <source>Re-processed</source>
        <translation>重新处理</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="131"/>
        <source>Time lost</source>
        <translation>损失的时间</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="131"/>
        <source>Last reason</source>
        <translation>最近原因</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="132"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="133"/>
        <source>Profile</source>
        <translation>配置</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="133"/>
        <source>Prompt</source>
        <translation>提示词</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="133"/>
        <source>Cached</source>
        <translation>已缓存</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="134"/>
        <source>Reusable</source>
        <translation>可复用</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="134"/>
        <source>TTFT</source>
        <translation>首 token 时间</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="134"/>
        <source>Verdict</source>
        <translation>判定</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="135"/>
        <source>Reason</source>
        <translation>原因</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="138"/>
        <source>Choose a request that is not a hit to see why.</source>
        <translation>选择一个未命中的请求查看原因。</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="140"/>
        <source>Client:</source>
        <translation>客户端：</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="141"/>
        <source>Profile:</source>
        <translation>配置：</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="142"/>
        <source>Session:</source>
        <translation>会话：</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="143"/>
        <source>Verdict:</source>
        <translation>判定：</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="204"/>
        <source>(no session)</source>
        <translation>（无会话）</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="246"/>
        <source>%1: the prompt was reused as far as it could be.</source>
        <translation>%1：提示词已尽可能复用。</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="247"/>
        <source>no verdict</source>
        <translation>无判定</translation>
    </message>
    <message>
        <location filename="../usage/request_log.py" line="254"/>
        <source>As recorded:</source>
        <translation>记录原文：</translation>
    </message>
</context>
<context>
    <name>ReuseAlerts</name>
    <message>
        <location filename="../control/log_alerts.py" line="85"/>
        <source>The last %1 requests reused less than %2 % of their prompt.</source>
        <extracomment>the diagnosis looks at this many of the latest requests</extracomment>
        <translation>最近 %1 个请求复用的提示词不足 %2 %。</translation>
    </message>
    <message>
        <location filename="../control/log_alerts.py" line="89"/>
        <source>Open the Cache log or run Verify to see why.</source>
        <translation>打开“缓存日志”或运行“验证”查看原因。</translation>
    </message>
    <message>
        <location filename="../control/log_alerts.py" line="90"/>
        <source>Likely cause: %1</source>
        <translation>可能的原因：%1</translation>
    </message>
    <message>
        <location filename="../control/log_alerts.py" line="94"/>
        <source>Fix: add %1 to the profile&apos;s env.</source>
        <translation>修复：把 %1 加入配置的环境变量。</translation>
    </message>
</context>
<context>
    <name>ReuseChart</name>
    <message>
        <location filename="../widgets/reuse_chart.py" line="61"/>
        <source>Prompt cache reuse per request</source>
        <translation>每个请求的提示缓存复用</translation>
    </message>
    <message>
        <location filename="../widgets/reuse_chart.py" line="77"/>
        <source>bars: reuse %   line: prompt time   (last %1 requests)</source>
        <translation>柱：复用率   线：提示处理时间   （最近 %1 个请求）</translation>
    </message>
    <message>
        <location filename="../widgets/reuse_chart.py" line="78"/>
        <source>No requests yet: cache reuse per request appears here.</source>
        <translation>暂无请求：每个请求的缓存复用情况会显示在这里。</translation>
    </message>
    <message>
        <location filename="../widgets/reuse_chart.py" line="202"/>
        <source>▲ %1 above the scale (largest %2)</source>
        <translation>▲ %1 个超出刻度（最大 %2）</translation>
    </message>
</context>
<context>
    <name>ReuseSummary</name>
    <message>
        <location filename="../logs/reuse_summary.py" line="52"/>
        <source>Requests shown as a hit, out of those that could reuse the cache: cold starts (the first request seen on a slot) and new conversations that share only a prefix are left out.</source>
        <translation>显示为命中的请求占可复用缓存请求的比例：不计冷启动（某个槽上看到的第一个请求）和只共享前缀的新会话。</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="55"/>
        <source>Prompt tokens the server took from its cache, out of all prompt tokens, summed over every request since following started (the server&apos;s own numbers).</source>
        <translation>服务器从缓存中取用的提示 token 占全部提示 token 的比例，按开始跟踪以来的每个请求累计（服务器自己的数字）。</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="58"/>
        <source>For each request shown as a miss or partial: the tokens of the slot&apos;s previous prompt that the server evaluated again (of the shorter of the two prompts, the part it did not reuse).</source>
        <translation>对每个显示为未命中或部分的请求：服务器重新计算的、该槽上一个提示中的 token（两个提示中较短者未被复用的部分）。</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="61"/>
        <source>The share of those requests&apos; prompt time (the server&apos;s “prompt eval time”) spent on the re-processed tokens.</source>
        <translation>这些请求的提示处理时间（服务器的“prompt eval time”）中花在重新处理的 token 上的部分。</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="68"/>
        <source>Prompt cache summary since following started</source>
        <translation>开始跟踪以来的提示缓存概况</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="74"/>
        <source>hit rate: no requests yet</source>
        <translation>命中率：暂无请求</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="75"/>
        <source>of prompt tokens from cache</source>
        <translation>来自缓存的提示 token 比例</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="76"/>
        <location filename="../logs/reuse_summary.py" line="92"/>
        <source>tokens re-processed</source>
        <translation>重新处理的 token</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="77"/>
        <location filename="../logs/reuse_summary.py" line="93"/>
        <source>time lost to misses</source>
        <translation>因未命中损失的时间</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="82"/>
        <source>hit rate: %1 of %2 requests</source>
        <translation>命中率：%2 个请求中 %1 个</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="86"/>
        <source>hit rate: only cold starts so far (%1)</source>
        <translation>命中率：目前只有冷启动（%1）</translation>
    </message>
    <message>
        <location filename="../logs/reuse_summary.py" line="90"/>
        <source>of %1 prompt tokens from cache</source>
        <translation>%1 个提示 token 中来自缓存的比例</translation>
    </message>
</context>
<context>
    <name>SessionDetail</name>
    <message>
        <location filename="../sessions/session_detail.py" line="63"/>
        <source>Where the cache was lost</source>
        <translation>缓存在哪里丢失</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="66"/>
        <source>Resume in a terminal</source>
        <translation>在终端中恢复</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="67"/>
        <source>Copy command</source>
        <translation>复制命令</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="68"/>
        <source>Export to Markdown…</source>
        <translation>导出为 Markdown…</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="69"/>
        <source>Opens your terminal in the project directory and resumes the session there</source>
        <translation>在项目目录中打开你的终端并在那里恢复该会话</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="89"/>
        <source>Pick a session to see its calls and where the cache was lost.</source>
        <translation>选择一个会话，查看它的调用以及缓存在哪里丢失。</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="99"/>
        <source>%1 · %2 · %3 to %4 · %5 calls (%6 by subagents) · models %7</source>
        <translation>%1 · %2 · %3 至 %4 · %5 次调用（子代理 %6 次）· 模型 %7</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="100"/>
        <source>%1 prompt tokens: %2 read from the cache (%3), %4 written, %5 new · %6 output tokens · cost at list prices %7</source>
        <translation>%1 个提示 token：%2 从缓存读取（%3），%4 写入，%5 新增 · %6 个输出 token · 按标价计的费用 %7</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="110"/>
        <source>No list price for %1: counted as free (a local server).</source>
        <translation>%1 没有标价：按免费计（本地服务器）。</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="123"/>
        <source>No call lost the cache.</source>
        <translation>没有调用丢失缓存。</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="132"/>
        <source>Call %1 at %2 — %3: %4 tokens processed again (%5). %6</source>
        <translation>调用 %1，%2 — %3：%4 个 token 被重新处理（%5）。%6</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="142"/>
        <source>Call %1 at %2 — the gateway recorded %3: %4</source>
        <translation>第 %1 次调用（%2）— 网关记录为 %3：%4</translation>
    </message>
    <message>
        <location filename="../sessions/session_detail.py" line="149"/>
        <source>Fix: set %1 in the profile&apos;s environment</source>
        <translation>修复：在配置的环境变量中设置 %1</translation>
    </message>
</context>
<context>
    <name>SessionHitAlerts</name>
    <message>
        <location filename="../control/usage_alerts.py" line="138"/>
        <source>Session %1 (%2, %3): the last %4 requests hit %5 of their prompt, below %6. Likely cause: %7.</source>
        <extracomment>a session named once is named again only after this long (the tray must not nag every poll) sessions whose opening the tray remembers having seen (older ones are forgotten first) sessions whose first judged row was seen, and each profile&apos;s last openings</extracomment>
        <translation>会话 %1（%2，%3）：最近 %4 个请求的提示词命中 %5，低于 %6。可能的原因：%7。</translation>
    </message>
    <message>
        <location filename="../control/usage_alerts.py" line="150"/>
        <source>New conversations on profile %1 (%2) reused %3 of the prompt they share with the one before, below %4. Likely cause: %5.</source>
        <translation>配置 %1（%2）上的新对话只复用了与上一个对话共享提示的 %3，低于 %4。可能原因：%5。</translation>
    </message>
    <message>
        <location filename="../control/usage_alerts.py" line="156"/>
        <source>Claude Code&apos;s attribution block (system[0]) differs per conversation.</source>
        <translation>Claude Code 的归属块（system[0]）在每个对话中都不同。</translation>
    </message>
    <message>
        <location filename="../control/usage_alerts.py" line="160"/>
        <source>Fix: set %1 in the profile&apos;s environment.</source>
        <translation>修复：在配置的环境变量中设置 %1。</translation>
    </message>
</context>
<context>
    <name>SessionMarkdown</name>
    <message>
        <location filename="../control/session_markdown.py" line="38"/>
        <source>Client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="39"/>
        <source>Session</source>
        <translation>会话</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="40"/>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="41"/>
        <source>First call</source>
        <translation>首次调用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="42"/>
        <source>Last call</source>
        <translation>最近调用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="43"/>
        <source>Models</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="44"/>
        <source>Client versions</source>
        <translation>客户端版本</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="45"/>
        <source>API calls</source>
        <translation>API 调用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="46"/>
        <source>Prompt tokens</source>
        <translation>提示 token</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="47"/>
        <source>Read from the cache</source>
        <translation>从缓存读取</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="48"/>
        <source>Written to the cache</source>
        <translation>写入缓存</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="49"/>
        <source>Output tokens</source>
        <translation>输出 token</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="50"/>
        <source>Cost at list prices</source>
        <translation>按标价计的费用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="51"/>
        <source>Resume</source>
        <translation>恢复</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="54"/>
        <source>Turns</source>
        <translation>逐次调用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="57"/>
        <source>Call</source>
        <translation>调用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="58"/>
        <source>Time</source>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="59"/>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="60"/>
        <source>Reused</source>
        <translation>复用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="61"/>
        <source>Written</source>
        <translation>写入</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="62"/>
        <source>New</source>
        <translation>新增</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="63"/>
        <source>Output</source>
        <translation>输出</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="64"/>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="65"/>
        <source>Loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="76"/>
        <source>Where the cache was lost</source>
        <translation>缓存在哪里丢失</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="79"/>
        <source>No call lost the cache.</source>
        <translation>没有调用丢失缓存。</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="82"/>
        <source>Call %1 (%2): %3 tokens processed again, $%4.</source>
        <translation>调用 %1（%2）：%3 个 token 被重新处理，$%4。</translation>
    </message>
    <message>
        <location filename="../control/session_markdown.py" line="87"/>
        <source>Reading notes</source>
        <translation>读取备注</translation>
    </message>
</context>
<context>
    <name>SessionWords</name>
    <message>
        <location filename="../control/session_words.py" line="17"/>
        <source>idle past the cache&apos;s lifetime</source>
        <translation>空闲超过缓存有效期</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="18"/>
        <source>model switched</source>
        <translation>切换了模型</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="19"/>
        <source>conversation compacted</source>
        <translation>对话被压缩</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="20"/>
        <source>resumed in a new process</source>
        <translation>在新进程中恢复</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="21"/>
        <source>client version changed</source>
        <translation>客户端版本变化</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="22"/>
        <source>subagent</source>
        <translation>子代理</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="23"/>
        <source>system prompt or tools changed</source>
        <translation>系统提示或工具有变化</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="24"/>
        <source>earlier messages changed</source>
        <translation>之前的消息有变化</translation>
    </message>
    <message>
        <location filename="../control/session_words.py" line="25"/>
        <source>cause unknown</source>
        <translation>原因未知</translation>
    </message>
</context>
<context>
    <name>SessionsModel</name>
    <message>
        <location filename="../sessions/sessions_model.py" line="29"/>
        <source>Client</source>
        <extracomment>the columns whose text is a number (right-aligned)</extracomment>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="29"/>
        <source>Project</source>
        <translation>项目</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="29"/>
        <source>Title</source>
        <translation>标题</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="29"/>
        <source>Last call</source>
        <translation>最近调用</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="30"/>
        <source>Calls</source>
        <translation>调用</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="30"/>
        <source>Tokens</source>
        <translation>token 数</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="30"/>
        <source>Hit %</source>
        <translation>命中 %</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_model.py" line="30"/>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
</context>
<context>
    <name>SessionsView</name>
    <message>
        <location filename="../sessions/sessions_view.py" line="53"/>
        <source>Search titles, projects, ids, models</source>
        <extracomment>typing in the search or project box re-reads the list this long after the last key</extracomment>
        <translation>搜索标题、项目、ID、模型</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="56"/>
        <source>All clients</source>
        <translation>全部客户端</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="60"/>
        <source>Project folder contains…</source>
        <translation>项目目录包含…</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="62"/>
        <source>All time</source>
        <translation>全部</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="62"/>
        <source>Last day</source>
        <translation>最近一天</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="62"/>
        <source>Last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="63"/>
        <source>Last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="65"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="66"/>
        <source>Read what the clients wrote since the last time</source>
        <translation>读取客户端自上次以来写入的内容</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="71"/>
        <source>Sessions are read from Claude Code&apos;s, Codex&apos;s and OpenCode&apos;s own files; nothing is written to them.</source>
        <translation>会话读取自 Claude Code、Codex 和 OpenCode 自己的文件；不会向这些文件写入任何内容。</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="152"/>
        <source>%1 of %2 files</source>
        <translation>%1 / %2 个文件</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="158"/>
        <source>%1 files looked at, %2 read (%3 new bytes).</source>
        <translation>查看了 %1 个文件，读取 %2 个（%3 个新字节）。</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="162"/>
        <source>%1 files could not be read fully: %2</source>
        <translation>%1 个文件未能完整读取：%2</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="171"/>
        <source>The sessions index cannot be read: %1</source>
        <translation>无法读取会话索引：%1</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="206"/>
        <source>Resuming in %1: %2</source>
        <translation>正在 %1 中恢复：%2</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="210"/>
        <source>No terminal found (set $TERMINAL). The command was copied: %1</source>
        <translation>未找到终端（请设置 $TERMINAL）。命令已复制：%1</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="216"/>
        <source>Copied: %1</source>
        <translation>已复制：%1</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="221"/>
        <source>Export session</source>
        <translation>导出会话</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="222"/>
        <source>Markdown (*.md)</source>
        <translation>Markdown (*.md)</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="231"/>
        <source>The session could not be exported: %1</source>
        <translation>无法导出该会话：%1</translation>
    </message>
    <message>
        <location filename="../sessions/sessions_view.py" line="233"/>
        <source>Exported to %1</source>
        <translation>已导出到 %1</translation>
    </message>
</context>
<context>
    <name>SettingsDialog</name>
    <message>
        <location filename="../shell/settings_dialog.py" line="76"/>
        <source>KV Switch Settings</source>
        <extracomment>(setting value, label) — labels of languages are written in that language</extracomment>
        <translation>KV Switch 设置</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="95"/>
        <source>Preferences</source>
        <translation>偏好设置</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="99"/>
        <source>System language</source>
        <translation>系统语言</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="102"/>
        <source>Language:</source>
        <translation>语言：</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="104"/>
        <source>Follow the system</source>
        <translation>跟随系统</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="104"/>
        <source>Light</source>
        <translation>浅色</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="104"/>
        <source>Dark</source>
        <translation>深色</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="108"/>
        <source>Theme:</source>
        <translation>主题：</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="109"/>
        <source>Start KV Switch at login, in the tray</source>
        <translation>登录时在托盘中启动 KV Switch</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="113"/>
        <source>Always show the changes before applying a profile</source>
        <translation>应用配置前总是显示更改</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="116"/>
        <source>Keep running in the tray when the window is closed</source>
        <translation>关闭窗口后继续在托盘中运行</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="119"/>
        <source>Notify when the followed server keeps losing the cache inside a conversation</source>
        <translation>所跟踪的服务器在会话内持续丢失缓存时发出通知</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="121"/>
        <source>A tray notification when %1 requests in a row reuse less than %2 %, at most one a minute</source>
        <translation>连续 %1 个请求复用率低于 %2 % 时在托盘通知，每分钟最多一次</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="133"/>
        <source>Through the gateway: the tray names a session whose last requests reuse less of their prompt than this</source>
        <translation>经过网关时：若某会话最近的请求复用的提示词低于此比例，托盘会指出该会话</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="135"/>
        <source>Alert when a session&apos;s hit rate falls below:</source>
        <translation>会话命中率低于此值时提醒：</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="139"/>
        <source>Where KV Switch keeps its data</source>
        <translation>KV Switch 的数据位置</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="143"/>
        <source>Settings and profiles:</source>
        <translation>设置和配置：</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="144"/>
        <source>Backups of changed files:</source>
        <translation>已修改文件的备份：</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="145"/>
        <source>KV Switch&apos;s own log:</source>
        <translation>KV Switch 自身日志：</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="150"/>
        <source>Open</source>
        <translation>打开</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="161"/>
        <source>Move profiles to another computer</source>
        <translation>将配置迁移到另一台电脑</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="163"/>
        <source>Include API keys in the exported file (it will be readable by you only)</source>
        <translation>在导出文件中包含 API 密钥（仅你本人可读）</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="167"/>
        <source>Export profiles…</source>
        <translation>导出配置…</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="169"/>
        <source>Import profiles…</source>
        <translation>导入配置…</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="178"/>
        <source>KV Switch %1 (%2) — Qt for Python %3</source>
        <translation>KV Switch %1（%2）— Qt for Python %3</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="231"/>
        <source>with API keys</source>
        <translation>包含 API 密钥</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="231"/>
        <source>without API keys</source>
        <translation>不含 API 密钥</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="232"/>
        <source>Exported %1 profile(s) %2 to %3.</source>
        <translation>已将 %1 个配置（%2）导出到 %3。</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="261"/>
        <source>Export profiles</source>
        <translation>导出配置</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="263"/>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="269"/>
        <source>Import profiles</source>
        <translation>导入配置</translation>
    </message>
    <message>
        <location filename="../shell/settings_dialog.py" line="270"/>
        <source>JSON files (*.json);;All files (*)</source>
        <translation>JSON 文件 (*.json);;所有文件 (*)</translation>
    </message>
</context>
<context>
    <name>SkillsPage</name>
    <message>
        <location filename="../library/skills_page.py" line="52"/>
        <source>A folder, a .zip, or a git URL (https://…, file://…, git@…)</source>
        <translation>文件夹、.zip 或 git 地址（https://…、file://…、git@…）</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="54"/>
        <source>Detect</source>
        <translation>自动识别</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="54"/>
        <source>Folder</source>
        <translation>文件夹</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="54"/>
        <source>Zip</source>
        <translation>Zip</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="55"/>
        <source>Git repository</source>
        <translation>Git 仓库</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="57"/>
        <source>Folder…</source>
        <translation>文件夹…</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="59"/>
        <source>Zip…</source>
        <translation>Zip…</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="61"/>
        <source>Install</source>
        <translation>安装</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="65"/>
        <source>Enable by copying (instead of a link)</source>
        <translation>以复制方式启用（而不是链接）</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="73"/>
        <source>Update</source>
        <translation>更新</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="75"/>
        <source>Remove</source>
        <translation>移除</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="77"/>
        <source>Import from CC Switch</source>
        <translation>从 CC Switch 导入</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="86"/>
        <source>Enable for:</source>
        <translation>启用于：</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="95"/>
        <source>Skills: a SKILL.md folder; each client lists every skill it reads in every request</source>
        <translation>技能：含 SKILL.md 的文件夹；每个客户端都会在每个请求中列出它读取的每个技能</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="111"/>
        <source>Skill</source>
        <translation>技能</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="111"/>
        <source>Tokens in every request</source>
        <translation>每个请求中的 token</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="112"/>
        <source>Source</source>
        <translation>来源</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="119"/>
        <source>not usable: %1</source>
        <translation>不可用：%1</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="121"/>
        <source>not from KV Switch: %1</source>
        <translation>不是来自 KV Switch：%1</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="135"/>
        <source>link</source>
        <translation>链接</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="135"/>
        <source>copy</source>
        <translation>复制</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="135"/>
        <source>reads it</source>
        <translation>会读取</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="146"/>
        <source>%1 reads it from %2</source>
        <translation>%1 从 %2 读取它</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="188"/>
        <source>Install a skill from a folder</source>
        <translation>从文件夹安装技能</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="195"/>
        <source>Install a skill from a zip</source>
        <translation>从 zip 安装技能</translation>
    </message>
    <message>
        <location filename="../library/skills_page.py" line="196"/>
        <source>Zip archives (*.zip)</source>
        <translation>Zip 压缩包 (*.zip)</translation>
    </message>
</context>
<context>
    <name>SweepChart</name>
    <message>
        <location filename="../verify/sweep_chart.py" line="74"/>
        <source>Hit rate and time to first token per sweep setting</source>
        <translation>每个扫描设置的命中率和首个词元时间</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="86"/>
        <source>bars: hit rate   line: warm TTFT   (%1 settings)</source>
        <translation>柱：命中率   线：热请求 TTFT   （%1 个设置）</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="88"/>
        <source>No sweep recorded yet: “Run a sweep…” restarts the profile&apos;s server once per setting.</source>
        <translation>尚无设置扫描记录：“运行扫描…”会按每个设置重启该配置的服务器一次。</translation>
    </message>
</context>
<context>
    <name>SweepDialog</name>
    <message>
        <location filename="../verify/sweep_dialog.py" line="48"/>
        <source>Settings sweep of “%1”</source>
        <translation>“%1”的设置扫描</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="50"/>
        <source>KV Switch starts the profile&apos;s server once per setting, measures each with verify&apos;s probe and stops it. Stop the server first: the sweep never restarts a server it did not start.</source>
        <translation>KV Switch 会按每个设置启动一次该配置的服务器，用验证的探测请求测量后再停止它。请先停止服务器：扫描绝不会重启不是它启动的服务器。</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="64"/>
        <source>Server command:</source>
        <translation>服务器命令：</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="66"/>
        <source>Settings (FLAG=V1,V2 per line):</source>
        <translation>设置（每行一个 FLAG=V1,V2）：</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="65"/>
        <source>Cache tier command (optional):</source>
        <translation>缓存层命令（可选）：</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="70"/>
        <source>Copy command</source>
        <translation>复制命令</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="79"/>
        <source>Start sweep</source>
        <translation>开始扫描</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="80"/>
        <source>Cancel sweep</source>
        <translation>取消扫描</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="82"/>
        <source>Close</source>
        <translation>关闭</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="119"/>
        <source>The same from a terminal: %1</source>
        <translation>在终端中等效的命令：%1</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="136"/>
        <source>Starting…</source>
        <translation>正在启动…</translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="147"/>
        <source>Cancelling: the server the sweep started is being stopped…</source>
        <translation>正在取消：正在停止扫描启动的服务器…</translation>
    </message>
    <message numerus="yes">
        <location filename="../verify/sweep_dialog.py" line="157"/>
        <source>Sweep finished: %n setting(s) measured.</source>
        <translation>
            <numerusform>扫描完成：已测量 %n 个设置。</numerusform>
        </translation>
    </message>
    <message>
        <location filename="../verify/sweep_dialog.py" line="164"/>
        <source>The sweep stopped: %1</source>
        <translation>扫描已停止：%1</translation>
    </message>
</context>
<context>
    <name>SweepView</name>
    <message>
        <location filename="../verify/sweep_chart.py" line="102"/>
        <location filename="../verify/sweep_chart.py" line="142"/>
        <source>Settings sweep</source>
        <translation>设置扫描</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="104"/>
        <source>Run a sweep…</source>
        <translation>运行扫描…</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="105"/>
        <source>Restart this profile&apos;s local server once per setting and measure each (kvswitch sweep)</source>
        <translation>按每个设置重启此配置的本地服务器一次并逐一测量（kvswitch sweep）</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="144"/>
        <source>Settings sweep of “%1”, %2: %3</source>
        <translation>“%1”的设置扫描，%2：%3</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="167"/>
        <source>Could not read the sweep history: %1</source>
        <translation>无法读取扫描历史：%1</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="179"/>
        <source>Choose a profile first: a sweep restarts its local server.</source>
        <translation>请先选择一个配置：扫描会重启它的本地服务器。</translation>
    </message>
    <message>
        <location filename="../verify/sweep_chart.py" line="154"/>
        <source>%1: L1 hit %2, L2 hit %3, computed %4 tokens</source>
        <translation>%1：L1 命中 %2，L2 命中 %3，计算 %4 个 token</translation>
    </message>
</context>
<context>
    <name>TrayIcon</name>
    <message>
        <location filename="../shell/tray.py" line="114"/>
        <source>Profiles cannot be read: %1</source>
        <translation>无法读取配置：%1</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="120"/>
        <source>Profiles</source>
        <translation>配置</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="120"/>
        <source>No profiles yet</source>
        <translation>还没有配置</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="145"/>
        <source>Cancel verify</source>
        <translation>取消验证</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="145"/>
        <location filename="../shell/tray.py" line="304"/>
        <location filename="../shell/tray.py" line="308"/>
        <source>Verify cache</source>
        <translation>验证缓存</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="148"/>
        <location filename="../shell/tray.py" line="313"/>
        <source>Verify with Claude Code</source>
        <translation>用 Claude Code 验证</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="154"/>
        <source>Show window</source>
        <translation>显示窗口</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="157"/>
        <source>Quit</source>
        <translation>退出</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="179"/>
        <source>%1 — no profile of yours</source>
        <translation>%1 — 不是你的配置</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="181"/>
        <source>%1 — %2 (its file differs)</source>
        <translation>%1 — %2（其文件不一致）</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="181"/>
        <source>%1 — %2</source>
        <translation>%1 — %2</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="193"/>
        <source>cache not checked yet</source>
        <translation>尚未检查缓存</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="193"/>
        <source>cache hit</source>
        <translation>缓存命中</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="194"/>
        <source>partial cache reuse</source>
        <translation>部分缓存复用</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="194"/>
        <source>cache miss</source>
        <translation>缓存未命中</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="197"/>
        <source>KV Switch: %1 (%2)</source>
        <translation>KV Switch：%1（%2）</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="200"/>
        <source>KV Switch: no profile applied</source>
        <translation>KV Switch：未应用任何配置</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="287"/>
        <source>Switched through the gateway: running sessions follow from their next request; no file was rewritten.</source>
        <translation>已通过网关切换：运行中的会话从下一个请求起跟随；没有改写任何文件。</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="290"/>
        <source>New %1 sessions use this profile.</source>
        <translation>新的 %1 会话将使用此配置。</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="291"/>
        <source>Switched to %1</source>
        <translation>已切换到 %1</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="295"/>
        <source>the clients&apos;</source>
        <translation>客户端的</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="299"/>
        <source>%1 was not applied</source>
        <translation>%1 未应用</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="314"/>
        <source>Claude Code through “%1”: %2</source>
        <translation>Claude Code 经由“%1”：%2</translation>
    </message>
    <message>
        <location filename="../shell/tray.py" line="231"/>
        <source>Last verify: %1</source>
        <translation>上次验证：%1</translation>
    </message>
</context>
<context>
    <name>TurnChart</name>
    <message>
        <location filename="../sessions/turn_chart.py" line="32"/>
        <source>Tokens reused, written and new per call</source>
        <extracomment>a bar is never wider than this (a two-call session must not look like a bar chart of two walls)</extracomment>
        <translation>每次调用复用、写入和新增的 token</translation>
    </message>
    <message>
        <location filename="../sessions/turn_chart.py" line="49"/>
        <source>%1 calls, %2 lost the cache</source>
        <translation>%1 次调用，%2 次丢失缓存</translation>
    </message>
    <message>
        <location filename="../sessions/turn_chart.py" line="58"/>
        <source>green: reused   amber: written to the cache   red: new   ▼ cache lost</source>
        <translation>绿：复用   琥珀：写入缓存   红：新增   ▼ 缓存丢失</translation>
    </message>
    <message>
        <location filename="../sessions/turn_chart.py" line="64"/>
        <source>No calls in this session.</source>
        <translation>此会话没有调用。</translation>
    </message>
</context>
<context>
    <name>UsageTrend</name>
    <message>
        <location filename="../usage/usage_view.py" line="104"/>
        <source>Cache hit rate over the period</source>
        <extracomment>hit rate at or above which a day is drawn as a hit, and below which it is a miss</extracomment>
        <translation>整个期间的缓存命中率</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="129"/>
        <source>bars: cache hit rate   line: mean time to first token   (%1 requests)</source>
        <translation>柱：缓存命中率   线：平均首 token 时间   （%1 个请求）</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="130"/>
        <source>No requests through the gateway yet: the hit rate over time appears here.</source>
        <translation>还没有请求经过网关：命中率随时间的变化会显示在这里。</translation>
    </message>
</context>
<context>
    <name>UsageView</name>
    <message>
        <location filename="../usage/usage_view.py" line="169"/>
        <source>Last 7 days</source>
        <translation>最近 7 天</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="169"/>
        <source>Last 24 hours</source>
        <translation>最近 24 小时</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="170"/>
        <source>Last 30 days</source>
        <translation>最近 30 天</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="170"/>
        <source>All time</source>
        <translation>全部</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="175"/>
        <source>Refresh</source>
        <translation>刷新</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="181"/>
        <source>Day</source>
        <translation>日期</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="181"/>
        <location filename="../usage/usage_view.py" line="184"/>
        <location filename="../usage/usage_view.py" line="188"/>
        <source>Requests</source>
        <translation>请求数</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="181"/>
        <location filename="../usage/usage_view.py" line="184"/>
        <source>Input tokens</source>
        <translation>输入 token</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="182"/>
        <location filename="../usage/usage_view.py" line="185"/>
        <source>Cached tokens</source>
        <translation>缓存 token</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="182"/>
        <location filename="../usage/usage_view.py" line="185"/>
        <source>Output tokens</source>
        <translation>输出 token</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="182"/>
        <location filename="../usage/usage_view.py" line="185"/>
        <source>Cost</source>
        <translation>费用</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="183"/>
        <location filename="../usage/usage_view.py" line="186"/>
        <source>Hit rate</source>
        <translation>命中率</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="184"/>
        <source>Profile</source>
        <translation>配置</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="195"/>
        <source>Period:</source>
        <translation>时段：</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="273"/>
        <source>No requests through the gateway in this period.</source>
        <translation>这段时间内没有请求经过网关。</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="189"/>
        <source>Per day</source>
        <translation>按天</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="190"/>
        <source>Per profile</source>
        <translation>按配置</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="211"/>
        <source>Loading usage…</source>
        <translation>正在读取用量…</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="277"/>
        <source>%1 requests · %2 prompt tokens, %3 from cache (%4) · %5 output tokens · cost %6</source>
        <translation>%1 个请求 · %2 个提示 token，其中 %3 个来自缓存（%4）· %5 个输出 token · 费用 %6</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="295"/>
        <source>“%1” now goes through the gateway: its next requests appear here.</source>
        <translation>“%1”现在经过网关：它接下来的请求会显示在这里。</translation>
    </message>
    <message>
        <location filename="../usage/usage_view.py" line="299"/>
        <source>The usage database cannot be read: %1</source>
        <translation>无法读取用量数据库：%1</translation>
    </message>
</context>
<context>
    <name>Verdicts</name>
    <message>
        <location filename="../control/shown_names.py" line="26"/>
        <source>HIT</source>
        <extracomment>what the gateway records as a request&apos;s client (its ``client`` and ``client_name`` columns)</extracomment>
        <translation>命中</translation>
    </message>
    <message>
        <location filename="../control/shown_names.py" line="26"/>
        <source>PARTIAL</source>
        <translation>部分命中</translation>
    </message>
    <message>
        <location filename="../control/shown_names.py" line="27"/>
        <source>MISS</source>
        <translation>未命中</translation>
    </message>
    <message>
        <location filename="../control/shown_names.py" line="27"/>
        <source>COLD</source>
        <translation>冷启动</translation>
    </message>
    <message>
        <location filename="../control/shown_names.py" line="28"/>
        <source>ERROR</source>
        <translation>错误</translation>
    </message>
    <message>
        <location filename="../control/shown_names.py" line="28"/>
        <source>UNKNOWN</source>
        <translation>未知</translation>
    </message>
</context>
<context>
    <name>VerifyCard</name>
    <message>
        <location filename="../verify/verify_card.py" line="66"/>
        <source>Verify cache</source>
        <translation>验证缓存</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="67"/>
        <source>Verify with Claude Code</source>
        <translation>用 Claude Code 验证</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="68"/>
        <source>Runs your installed Claude Code headless through the profile (two conversations, four turns) and judges every turn with the server&apos;s own numbers.</source>
        <translation>通过该配置以无界面方式运行你安装的 Claude Code（两个会话、四轮），并用服务器自己的数字评判每一轮。</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="71"/>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="77"/>
        <source>Sends the same long prompt twice to the active profile&apos;s server and reads the server&apos;s own numbers: does the second request reuse the first one&apos;s KV cache?</source>
        <translation>向活动配置的服务器发送两次相同的长提示，并读取服务器自己报告的数字：第二次请求是否复用了第一次的 KV 缓存？</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="106"/>
        <source>Retry</source>
        <translation>重试</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="107"/>
        <source>Edit profile</source>
        <translation>编辑配置</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="119"/>
        <source>Cached tokens</source>
        <translation>已缓存 token</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="119"/>
        <source>Reuse</source>
        <translation>复用率</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="120"/>
        <source>Time to first token</source>
        <translation>首 token 时间</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="120"/>
        <source>Evidence</source>
        <translation>依据</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="121"/>
        <source>Claude Code requests</source>
        <translation>Claude Code 请求</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="174"/>
        <source>Verifying “%1”…</source>
        <translation>正在验证“%1”…</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="194"/>
        <location filename="../verify/verify_card.py" line="217"/>
        <source>Verify failed</source>
        <translation>验证失败</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="215"/>
        <source>Cache hit</source>
        <translation>缓存命中</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="215"/>
        <source>Partial reuse</source>
        <translation>部分复用</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="216"/>
        <source>Cache miss</source>
        <translation>缓存未命中</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="216"/>
        <location filename="../verify/verify_card.py" line="266"/>
        <source>Unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="225"/>
        <source>But the check with Claude Code-shaped requests did not finish, so this is not yet a verdict for Claude Code: %1</source>
        <translation>但按 Claude Code 请求格式进行的检查没有完成，所以这还不是对 Claude Code 的结论：%1</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="239"/>
        <source> (%1× faster)</source>
        <translation>（快 %1 倍）</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="241"/>
        <source> (slower)</source>
        <translation>（更慢）</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="252"/>
        <location filename="../verify/verify_card.py" line="271"/>
        <source>Why: %1</source>
        <translation>原因：%1</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="264"/>
        <source>Claude Code keeps the cache</source>
        <translation>Claude Code 保持了缓存</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="265"/>
        <source>Claude Code: partial reuse</source>
        <translation>Claude Code：部分复用</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="266"/>
        <source>Claude Code loses the cache</source>
        <translation>Claude Code 丢失了缓存</translation>
    </message>
    <message>
        <location filename="../verify/verify_card.py" line="288"/>
        <source>Fix: add %1 to “%2”</source>
        <translation>修复：将 %1 添加到“%2”</translation>
    </message>
</context>
<context>
    <name>VerifyClients</name>
    <message>
        <location filename="../verify/verify_clients.py" line="28"/>
        <source>Verify with Codex</source>
        <translation>用 Codex 验证</translation>
    </message>
    <message>
        <location filename="../verify/verify_clients.py" line="29"/>
        <source>Verify with OpenCode</source>
        <translation>用 OpenCode 验证</translation>
    </message>
    <message>
        <location filename="../control/clients.py" line="80"/>
        <source>Nothing was verified: %1</source>
        <translation>未进行验证：%1</translation>
    </message>
    <message>
        <location filename="../verify/verify_clients.py" line="56"/>
        <source>Runs your installed %1 headless through the active profile (two turns of one conversation, then a new one) and judges every turn by the server&apos;s own numbers.</source>
        <translation>通过当前配置无界面运行你安装的 %1（一个会话的两轮，然后一个新会话），并按服务器自己的数字判断每一轮。</translation>
    </message>
    <message>
        <location filename="../control/clients.py" line="91"/>
        <source>Verify cancelled; the running %1 was stopped.</source>
        <translation>验证已取消；正在运行的 %1 已停止。</translation>
    </message>
</context>
<context>
    <name>VerifyHistoryPanel</name>
    <message>
        <location filename="../verify/verify_history.py" line="109"/>
        <source>Time</source>
        <extracomment>what a history column gets beyond its widest text (two 8 px grid units)</extracomment>
        <translation>时间</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="109"/>
        <source>Check</source>
        <translation>检查</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="109"/>
        <source>Client</source>
        <translation>客户端</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="109"/>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="109"/>
        <source>Reuse</source>
        <translation>复用率</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="110"/>
        <source>TTFT cold → warm</source>
        <translation>首 token 时间 冷 → 热</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="110"/>
        <source>Server build</source>
        <translation>服务器版本</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="119"/>
        <source>Compare selected</source>
        <translation>比较所选</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="120"/>
        <source>Select two runs to see them side by side.</source>
        <translation>选择两次记录以并排查看。</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="122"/>
        <source>Export CSV…</source>
        <translation>导出 CSV…</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="145"/>
        <source>Verify history of “%1”</source>
        <translation>“%1”的验证记录</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="146"/>
        <source>Verify history</source>
        <translation>验证记录</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="155"/>
        <source>Recorded as %1</source>
        <translation>记录值：%1</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="199"/>
        <source>Export verify history</source>
        <translation>导出验证记录</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="200"/>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="206"/>
        <source>Could not export: %1</source>
        <translation>无法导出：%1</translation>
    </message>
    <message>
        <location filename="../verify/verify_history.py" line="208"/>
        <source>Exported %1 runs to %2</source>
        <translation>已将 %1 次记录导出到 %2</translation>
    </message>
</context>
<context>
    <name>Welcome</name>
    <message>
        <location filename="../profiles/profile_page.py" line="42"/>
        <source>Welcome to KV Switch</source>
        <translation>欢迎使用 KV Switch</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="48"/>
        <source>KV Switch points Claude Code, Codex and OpenCode at the backend you pick — a cloud vendor or a model server on this computer — in one click, and shows from the server&apos;s own numbers whether the prompt cache is reused, so a local model answers fast instead of reading the whole conversation again.</source>
        <translation>KV Switch 一键把 Claude Code、Codex 和 OpenCode 指向你选的后端——云端厂商或本机的模型服务器——并用服务器自己的数据说明提示缓存是否被复用，让本地模型快速作答，而不是把整段对话重新读一遍。</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="53"/>
        <source>Add a profile…</source>
        <translation>添加配置…</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="54"/>
        <source>Servers running here, local presets and cloud vendors</source>
        <translation>本机运行中的服务器、本地预设和云端厂商</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="56"/>
        <source>Run the setup assistant…</source>
        <translation>运行设置助手…</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="57"/>
        <source>Find the coding tools and model servers on this computer</source>
        <translation>查找本机的编程工具和模型服务器</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="58"/>
        <source>Import from Claude Code</source>
        <translation>从 Claude Code 导入</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="59"/>
        <source>The backend ~/.claude/settings.json points at now</source>
        <translation>~/.claude/settings.json 当前指向的后端</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="60"/>
        <source>Import from CC Switch</source>
        <translation>从 CC Switch 导入</translation>
    </message>
    <message>
        <location filename="../profiles/profile_page.py" line="61"/>
        <source>Every Claude Code and Codex provider of CC Switch</source>
        <translation>CC Switch 中的全部 Claude Code 和 Codex 提供商</translation>
    </message>
</context>
<context>
    <name>app</name>
    <message>
        <location filename="../app.py" line="176"/>
        <location filename="../shell/shell.py" line="168"/>
        <source>KV Switch cannot start</source>
        <extracomment>the gateway check (it loads aiohttp and httpx on a worker) waits until the window is on screen</extracomment>
        <translation>KV Switch 无法启动</translation>
    </message>
</context>
<context>
    <name>errors</name>
    <message>
        <location filename="../errors.py" line="124"/>
        <source>KV Switch: unexpected error</source>
        <translation>KV Switch：意外错误</translation>
    </message>
    <message>
        <location filename="../errors.py" line="125"/>
        <source>Something went wrong inside KV Switch. Your files were not changed by this error. The report below contains no API keys; copy it when you report the problem.</source>
        <translation>KV Switch 内部出错。此错误没有修改你的文件。下面的报告不包含任何 API 密钥；报告问题时请复制它。</translation>
    </message>
</context>
<context>
    <name>importing</name>
    <message>
        <location filename="../profiles/importing.py" line="37"/>
        <source>Import risky profiles?</source>
        <translation>导入有风险的配置？</translation>
    </message>
    <message>
        <location filename="../profiles/importing.py" line="38"/>
        <source>Some profiles set environment variables that change how shells or Claude Code run programs, or write into project folders:

%1

Import them only if you trust the source.</source>
        <translation>部分配置设置了会改变 shell 或 Claude Code 运行程序方式的环境变量，或会写入项目文件夹：

%1

仅在你信任来源时导入。</translation>
    </message>
    <message>
        <location filename="../profiles/importing.py" line="56"/>
        <source>Importing is not available in this build.</source>
        <translation>此版本不支持导入。</translation>
    </message>
    <message>
        <location filename="../profiles/importing.py" line="70"/>
        <source>Nothing to import: no backend settings found.</source>
        <translation>没有可导入的内容：未找到后端设置。</translation>
    </message>
    <message>
        <location filename="../profiles/importing.py" line="73"/>
        <location filename="../profiles/importing.py" line="87"/>
        <source>Nothing was imported.</source>
        <translation>没有导入任何内容。</translation>
    </message>
    <message>
        <location filename="../profiles/importing.py" line="90"/>
        <source>Imported %1 profile(s): %2.</source>
        <translation>已导入 %1 个配置：%2。</translation>
    </message>
</context>
</TS>
