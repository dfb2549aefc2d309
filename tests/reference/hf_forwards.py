"""hf_forwards.py: the plain-PyTorch forwards of make_hf_fixtures.py's dense
families, with no `transformers`: LlamaForCausalLM, Qwen2ForCausalLM,
Qwen3ForCausalLM plus the gated variants of the paper's released code,
GPT2LMHeadModel, GPTNeoXForCausalLM, Olmo2ForCausalLM, MistralForCausalLM
and Phi3ForCausalLM, each following its Hugging Face modeling file, and the
reference ops they share with the per-family reference scripts (RMSNorm,
LayerNorm, RoPE with Llama 3 scaling, causal attention with an optional
sliding window, tanh GELU, the SwiGLU MLP, top-k routing of a mixture of
experts, which layers slide).

Each forward(cfg, W, ids, ...) takes the config dict, the weights by their
checkpoint names and the token ids [T], and returns (logits [T,V], per-layer
attention maps [H,T,T], per-layer gate scores [T,C] (gated Qwen3 only, else
empty), per-layer block outputs [T,d]); it runs in the weights' dtype.
"""
import math

import torch
import torch.nn.functional as F

# ---------------------------------------------------------------- reference ops


def rms_norm(x, w, eps, one=False, divide=False):
    """RMSNorm of x over its last dim times w (one: times 1 + w, Gemma's and
    Step-3.5's). divide: w x / sqrt(mean(x^2) + eps), the arithmetic of the
    MoE families' references (Laguna, AFMoE, Step-3.5), whose last bits
    differ from w (x rsqrt(mean(x^2) + eps))."""
    var = x.pow(2).mean(-1, keepdim=True)
    w = 1.0 + w if one else w
    if divide:
        return w * x / torch.sqrt(var + eps)
    return w * (x * torch.rsqrt(var + eps))


def layer_norm(x, w, b, eps):
    return F.layer_norm(x, (x.shape[-1],), w, b, eps)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def inv_freq_of(dim, base, scaling=None):
    inv = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if scaling is None:
        return inv
    # transformers' _compute_llama3_parameters
    factor = scaling["factor"]
    low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    low_wl, high_wl = old / low, old / high
    wavelen = 2 * math.pi / inv
    inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
    medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
    return torch.where(medium, smoothed, inv_l)


def rope_cos_sin(T, dim, base, scaling=None):
    inv = inv_freq_of(dim, base, scaling)
    freqs = torch.arange(T).float()[:, None] @ inv[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def turn(x, theta, rd):
    """RoPE on x [heads, T, dh]: within the first rd dims, pairs (i, i + rd/2)
    turned by t * theta^(-2i/rd); the other dims pass."""
    half = rd // 2
    pos = torch.arange(x.shape[1], dtype=torch.float64)
    ang = pos[:, None] * theta ** (-torch.arange(half, dtype=torch.float64) * 2.0 / rd)[None, :]
    c, s = torch.cos(ang), torch.sin(ang)
    lo, hi, rest = x[..., :half], x[..., half:rd], x[..., rd:]
    return torch.cat((lo * c - hi * s, hi * c + lo * s, rest), dim=-1)


def exp_softmax(s):
    """exp(s - max) / sum over the last dim, as the MoE families' references
    compute it (its last bits differ from torch.softmax's)."""
    a = torch.exp(s - s.max(-1, keepdim=True).values)
    return a / a.sum(-1, keepdim=True)


def causal_probs(q, k, window=None, scale=None, softcap=None, sinks=None, softmax=None):
    """q [..., H,T,dh], k [..., H,T,dh] -> probs [..., H,T,T] (with sinks
    [H], [..., H,T,T+1]: each head's sink logit a last column). Logits q k^T / sqrt(dh), or
    times scale; softcap: softcap tanh(logits / softcap), before the mask.
    window: query t sees keys j with t - window < j <= t (transformers'
    sliding_window_overlay: kv_idx > q_idx - sliding_window), else j <= t.
    softmax: the function of the logits (default torch.softmax)."""
    T, dh = q.shape[-2], q.shape[-1]
    s = q @ k.transpose(-1, -2)
    s = s / math.sqrt(dh) if scale is None else s * scale
    if softcap:
        s = torch.tanh(s / softcap) * softcap
    mask = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    if window is not None:
        mask = mask | torch.tril(torch.ones(T, T, dtype=torch.bool), -window)
    s = s.masked_fill(mask, float("-inf"))
    if sinks is not None:
        s = torch.cat((s, sinks.view(-1, 1, 1).expand(*s.shape[:-1], 1)), dim=-1)
    return softmax(s) if softmax else torch.softmax(s, dim=-1)


def causal_attention(q, k, v, window=None, scale=None, softcap=None, softmax=None):
    """q [H,T,dh], k/v [H,T,dh] -> (out [T,H,dh], probs [H,T,T]); the
    arguments as causal_probs'."""
    p = causal_probs(q, k, window, scale, softcap, None, softmax)
    return (p @ v).transpose(0, 1), p


def repeat_heads(x, H):
    """x [Hkv, T, dh] with each KV head repeated for its H / Hkv query heads."""
    return x.repeat_interleave(H // x.shape[0], dim=0)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3))))


def silu_mul(gate, up):
    """silu(gate) * up, silu written out as gate / (1 + exp(-gate))."""
    return gate / (1.0 + torch.exp(-gate)) * up


def swiglu(W, p, h, glu=silu_mul):
    """down(glu(gate(h), up(h))) of the module at prefix p (its
    {gate,up,down}_proj.weight); glu: silu(gate) * up unless given."""
    gate, up = h @ W[p + "gate_proj.weight"].T, h @ W[p + "up_proj.weight"].T
    return glu(gate, up) @ W[p + "down_proj.weight"].T


def moe_sum(h, s, key, k, expert, renorm=True, scale=1.0, start=None, margins=None):
    """The routed experts' sum over h [T, d]: each token's k experts of the
    largest key [T, E], weighted by their scores s over their sum (+1e-20)
    when renorm, else by s, times scale; expert(e, h[t:t+1]) -> [1, d].
    start: the sum's first term (default zeros). margins: each token's
    gap between its k-th and (k+1)-th key appended (when k < E)."""
    order = torch.argsort(key, dim=-1, descending=True)
    y = torch.zeros_like(h) if start is None else start
    for t in range(h.shape[0]):
        chosen = order[t, :k]
        if margins is not None and k < key.shape[-1]:
            margins.append(float(key[t, order[t, k - 1]] - key[t, order[t, k]]))
        w = s[t, chosen] / (s[t, chosen].sum() + 1e-20) if renorm else s[t, chosen]
        w = w * scale
        for j, e in enumerate(chosen.tolist()):
            y[t] = y[t] + w[j] * expert(e, h[t:t + 1])[0]
    return y


def slides(cfg, l, every):
    """Whether layer l attends over a sliding window: as layer_types names
    it, else all but every `every`-th layer."""
    lt = cfg.get("layer_types")
    if lt:
        return lt[l] == "sliding_attention"
    return (l + 1) % every != 0

# ---------------------------------------------------------------- forwards


def forward_llama(cfg, W, ids, family, gates_open=False, gate_fn=None, resid_fn=None):
    """gates_open: every gate score 1 instead of its sigmoid (the
    gates-open intervention's reference); gate_fn(l, s): layer l's applied
    scores from their sigmoid s (the other gate interventions');
    resid_fn(l, x): the residual stream after layer l (the residual ones')."""
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim", 128 if family == "qwen3" else d // H)  # Qwen3Config default 128
    eps, grp, T = cfg["rms_norm_eps"], H // Hkv, len(ids)
    hw = cfg.get("headwise_attn_output_gate", False)
    ew = cfg.get("elementwise_attn_output_gate", False)
    qk_norm = family == "qwen3" and cfg.get("use_qk_norm", True)
    cos, sin = rope_cos_sin(T, dh, cfg.get("rope_theta", 10000.0), cfg.get("rope_scaling"))
    bias = family == "qwen2" or cfg.get("attention_bias", False)
    obias = family != "qwen2" and cfg.get("attention_bias", False)
    x = W["model.embed_tokens.weight"][ids]
    att, gates, hidden = [], [], []
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = F.linear(h, W[p + "self_attn.q_proj.weight"], W[p + "self_attn.q_proj.bias"] if bias else None)
        k = F.linear(h, W[p + "self_attn.k_proj.weight"], W[p + "self_attn.k_proj.bias"] if bias else None)
        v = F.linear(h, W[p + "self_attn.v_proj.weight"], W[p + "self_attn.v_proj.bias"] if bias else None)
        gate = None
        if hw or ew:  # the paper's modeling_qwen3.py: per KV group [queries | gates]
            g = dh if ew else 1
            q = q.view(T, Hkv, -1)
            q, gate = torch.split(q, [dh * grp, g * grp], dim=-1)
            gate = gate.reshape(T, H, g)
        q = q.reshape(T, H, dh)
        k = k.view(T, Hkv, dh)
        v = v.view(T, Hkv, dh)
        if qk_norm:
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps)
        q, k, v = q.transpose(0, 1), k.transpose(0, 1), v.transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = k.repeat_interleave(grp, dim=0)  # repeat_kv
        v = v.repeat_interleave(grp, dim=0)
        o, probs = causal_attention(q, k, v)
        if gate is not None:
            s = torch.ones_like(gate) if gates_open else torch.sigmoid(gate)
            if gate_fn is not None:
                s = gate_fn(l, s)
            o = o * s
            gates.append(s.reshape(T, -1))
        o = F.linear(o.reshape(T, H * dh), W[p + "self_attn.o_proj.weight"],
                     W[p + "self_attn.o_proj.bias"] if obias else None)
        x = x + o
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        m = F.silu(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
        x = x + F.linear(m, W[p + "mlp.down_proj.weight"])
        if resid_fn is not None:
            x = resid_fn(l, x)
        att.append(probs)
        hidden.append(x)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    logits = rms_norm(x, W["model.norm.weight"], eps) @ head.T
    return logits, att, gates, hidden


def forward_olmo2(cfg, W, ids):
    """Olmo2ForCausalLM as modeling_olmo2.py (transformers v4.48 to v5)
    defines it: no pre-norms; q_norm / k_norm are RMSNorms over the whole
    q and k projections (H*dh and Hkv*dh wide), before the heads are split
    and RoPE turns them; post_attention_layernorm norms the attention's
    output and post_feedforward_layernorm the MLP's, each before its
    residual add; rms_norm_eps defaults to 1e-5 (Olmo2Config)."""
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh, eps, grp, T = d // H, cfg.get("rms_norm_eps", 1e-5), H // Hkv, len(ids)
    cos, sin = rope_cos_sin(T, dh, cfg["rope_theta"])
    cos, sin = cos.to(W["model.norm.weight"].dtype), sin.to(W["model.norm.weight"].dtype)
    bias = cfg.get("attention_bias", False)
    x = W["model.embed_tokens.weight"][ids]
    att, hidden = [], []
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l

        def proj(n):
            return F.linear(x, W[p + "self_attn.%s_proj.weight" % n],
                            W[p + "self_attn.%s_proj.bias" % n] if bias else None)
        q = rms_norm(proj("q"), W[p + "self_attn.q_norm.weight"], eps)
        k = rms_norm(proj("k"), W[p + "self_attn.k_norm.weight"], eps)
        v = proj("v")
        q = q.view(T, H, dh).transpose(0, 1)
        k = k.view(T, Hkv, dh).transpose(0, 1)
        v = v.view(T, Hkv, dh).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        o, probs = causal_attention(q, k.repeat_interleave(grp, dim=0), v.repeat_interleave(grp, dim=0))
        o = F.linear(o.reshape(T, H * dh), W[p + "self_attn.o_proj.weight"],
                     W[p + "self_attn.o_proj.bias"] if bias else None)
        x = x + rms_norm(o, W[p + "post_attention_layernorm.weight"], eps)
        m = F.silu(F.linear(x, W[p + "mlp.gate_proj.weight"])) * F.linear(x, W[p + "mlp.up_proj.weight"])
        x = x + rms_norm(F.linear(m, W[p + "mlp.down_proj.weight"]), W[p + "post_feedforward_layernorm.weight"], eps)
        att.append(probs)
        hidden.append(x)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    logits = rms_norm(x, W["model.norm.weight"], eps) @ head.T
    return logits, att, [], hidden


def forward_mistral(cfg, W, ids):
    """MistralForCausalLM as modeling_mistral.py (transformers v4.48 to v5)
    defines it: Llama's layer (RMSNorm before attention and MLP, RoPE, GQA,
    SwiGLU) with every layer's attention under the sliding-window causal
    mask when sliding_window is set (MistralConfig's default 4096; null:
    full causal)."""
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads", H)
    dh = cfg.get("head_dim") or d // H
    eps, grp, T = cfg.get("rms_norm_eps", 1e-6), H // Hkv, len(ids)
    window = cfg.get("sliding_window", 4096)
    cos, sin = rope_cos_sin(T, dh, cfg["rope_theta"])
    cos, sin = cos.to(W["model.norm.weight"].dtype), sin.to(W["model.norm.weight"].dtype)
    x = W["model.embed_tokens.weight"][ids]
    att, hidden = [], []
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        q = F.linear(h, W[p + "self_attn.q_proj.weight"]).view(T, H, dh).transpose(0, 1)
        k = F.linear(h, W[p + "self_attn.k_proj.weight"]).view(T, Hkv, dh).transpose(0, 1)
        v = F.linear(h, W[p + "self_attn.v_proj.weight"]).view(T, Hkv, dh).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        o, probs = causal_attention(q, k.repeat_interleave(grp, dim=0), v.repeat_interleave(grp, dim=0),
                                    window)
        x = x + F.linear(o.reshape(T, H * dh), W[p + "self_attn.o_proj.weight"])
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        m = F.silu(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
        x = x + F.linear(m, W[p + "mlp.down_proj.weight"])
        att.append(probs)
        hidden.append(x)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    logits = rms_norm(x, W["model.norm.weight"], eps) @ head.T
    return logits, att, [], hidden


def forward_phi3(cfg, W, ids):
    """Phi3ForCausalLM as modeling_phi3.py (transformers v4.48 to v5)
    defines it: Llama's pre-norm layer with the projections fused.
    qkv_proj's rows are the queries (H*dh), then the keys (Hkv*dh), then
    the values (Hkv*dh); gate_up_proj's rows the gate (ff), then the up
    projection (ff), the MLP being down(up * silu(gate)). RoPE turns the
    first rotary_dim = int(head_dim * partial_rotary_factor) dims of each
    head by rotate_half over those dims, the rest passing unchanged. The
    sliding_window (Phi3Config's default null) masks every layer when set;
    rms_norm_eps defaults to 1e-5."""
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    Hkv = cfg.get("num_key_value_heads") or H
    dh = cfg.get("head_dim") or d // H
    eps, grp, T = cfg.get("rms_norm_eps", 1e-5), H // Hkv, len(ids)
    rd = int(dh * cfg.get("partial_rotary_factor", 1.0))
    window = cfg.get("sliding_window")
    cos, sin = rope_cos_sin(T, rd, cfg["rope_theta"])
    cos, sin = cos.to(W["model.norm.weight"].dtype), sin.to(W["model.norm.weight"].dtype)

    def rope(x):
        r, rest = x[..., :rd], x[..., rd:]
        return torch.cat((r * cos + rotate_half(r) * sin, rest), dim=-1)
    x = W["model.embed_tokens.weight"][ids]
    att, hidden = [], []
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps)
        qkv = F.linear(h, W[p + "self_attn.qkv_proj.weight"])
        q, k, v = qkv.split([H * dh, Hkv * dh, Hkv * dh], dim=-1)
        q = rope(q.reshape(T, H, dh).transpose(0, 1))
        k = rope(k.reshape(T, Hkv, dh).transpose(0, 1))
        v = v.reshape(T, Hkv, dh).transpose(0, 1)
        o, probs = causal_attention(q, k.repeat_interleave(grp, dim=0), v.repeat_interleave(grp, dim=0),
                                    window)
        x = x + F.linear(o.reshape(T, H * dh), W[p + "self_attn.o_proj.weight"])
        h = rms_norm(x, W[p + "post_attention_layernorm.weight"], eps)
        gate, up = F.linear(h, W[p + "mlp.gate_up_proj.weight"]).chunk(2, dim=-1)
        x = x + F.linear(up * F.silu(gate), W[p + "mlp.down_proj.weight"])
        att.append(probs)
        hidden.append(x)
    head = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    logits = rms_norm(x, W["model.norm.weight"], eps) @ head.T
    return logits, att, [], hidden


def forward_gpt2(cfg, W, ids, pre):
    d, H, eps, T = cfg["n_embd"], cfg["n_head"], cfg["layer_norm_epsilon"], len(ids)
    dh = d // H
    x = W[pre + "wte.weight"][ids] + W[pre + "wpe.weight"][:T]
    att, hidden = [], []
    for l in range(cfg["n_layer"]):
        p = pre + "h.%d." % l
        h = layer_norm(x, W[p + "ln_1.weight"], W[p + "ln_1.bias"], eps)
        qkv = h @ W[p + "attn.c_attn.weight"] + W[p + "attn.c_attn.bias"]  # Conv1D [in, out]
        q, k, v = qkv.split(d, dim=-1)
        q, k, v = (t.view(T, H, dh).transpose(0, 1) for t in (q, k, v))
        o, probs = causal_attention(q, k, v)
        x = x + o.reshape(T, d) @ W[p + "attn.c_proj.weight"] + W[p + "attn.c_proj.bias"]
        h = layer_norm(x, W[p + "ln_2.weight"], W[p + "ln_2.bias"], eps)
        m = gelu_tanh(h @ W[p + "mlp.c_fc.weight"] + W[p + "mlp.c_fc.bias"])
        x = x + m @ W[p + "mlp.c_proj.weight"] + W[p + "mlp.c_proj.bias"]
        att.append(probs)
        hidden.append(x)
    logits = layer_norm(x, W[pre + "ln_f.weight"], W[pre + "ln_f.bias"], eps) @ W[pre + "wte.weight"].T
    return logits, att, [], hidden


def forward_neox(cfg, W, ids):
    d, H, eps, T = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"], len(ids)
    dh = d // H
    rd = int(dh * cfg["rotary_pct"])
    cos, sin = rope_cos_sin(T, rd, cfg["rotary_emb_base"])
    x = W["gpt_neox.embed_in.weight"][ids]
    att, hidden = [], []

    def mlp(h, p):
        u = F.gelu(F.linear(h, W[p + "mlp.dense_h_to_4h.weight"], W[p + "mlp.dense_h_to_4h.bias"]))
        return F.linear(u, W[p + "mlp.dense_4h_to_h.weight"], W[p + "mlp.dense_4h_to_h.bias"])

    for l in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % l
        h = layer_norm(x, W[p + "input_layernorm.weight"], W[p + "input_layernorm.bias"], eps)
        qkv = F.linear(h, W[p + "attention.query_key_value.weight"], W[p + "attention.query_key_value.bias"])
        qkv = qkv.view(T, H, 3 * dh).transpose(0, 1)
        q, k, v = qkv[..., :dh], qkv[..., dh:2 * dh], qkv[..., 2 * dh:]
        qr, kr = q[..., :rd], k[..., :rd]
        qr = qr * cos + rotate_half(qr) * sin
        kr = kr * cos + rotate_half(kr) * sin
        q = torch.cat((qr, q[..., rd:]), dim=-1)
        k = torch.cat((kr, k[..., rd:]), dim=-1)
        o, probs = causal_attention(q, k, v)
        a = F.linear(o.reshape(T, d), W[p + "attention.dense.weight"], W[p + "attention.dense.bias"])
        ln2 = (W[p + "post_attention_layernorm.weight"], W[p + "post_attention_layernorm.bias"])
        if cfg["use_parallel_residual"]:
            x = x + a + mlp(layer_norm(x, *ln2, eps), p)
        else:
            x = x + a
            x = x + mlp(layer_norm(x, *ln2, eps), p)
        att.append(probs)
        hidden.append(x)
    logits = layer_norm(x, W["gpt_neox.final_layer_norm.weight"], W["gpt_neox.final_layer_norm.bias"],
                        eps) @ W["embed_out.weight"].T
    return logits, att, [], hidden
