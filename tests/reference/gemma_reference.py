"""gemma_reference.py: Gemma 2 and Gemma 3 (text) for make_hf_fixtures.py:
random weights and a plain-PyTorch forward (no `transformers`), written
from modeling_gemma2.py and modeling_gemma3.py of transformers v4.50.0
(Gemma2ForCausalLM, Gemma3ForCausalLM with Gemma3TextConfig):

  * Gemma2RMSNorm / Gemma3RMSNorm: x / sqrt(mean(x^2) + eps) * (1 + w);
  * the embeddings times hidden_size ** 0.5 (a float32 scalar, the
    hidden states' dtype when the model runs in float32);
  * each layer: input_layernorm, attention, post_attention_layernorm of
    its output, residual add; pre_feedforward_layernorm, the MLP
    down(gelu_tanh(gate(h)) * up(h)), post_feedforward_layernorm of its
    output, residual add;
  * attention: q/k/v without bias; Gemma 3 q_norm / k_norm per head before
    RoPE; logits q k^T * query_pre_attn_scalar ** -0.5, then (Gemma 2)
    softcap * tanh(logits / softcap) before the mask; the sliding layers
    (Gemma 2: `not bool(layer_idx % 2)`, Gemma 3: `bool((layer_idx + 1) %
    sliding_window_pattern)`) see keys t - W < j <= t; Gemma 3's sliding
    layers turn by rope_local_base_freq, the others by rope_theta (and
    rope_scaling's linear factor);
  * the final norm, the tied head, then (Gemma 2) the logits soft-capped by
    final_logit_softcapping.

Run in float64 on the checkpoint's rounded weights."""
import torch
import torch.nn.functional as F
from hf_forwards import causal_attention, gelu_tanh, rms_norm, rotate_half, slides


def cos_sin(T, dh, base, factor, dtype):
    inv = 1.0 / (base ** (torch.arange(0, dh, 2, dtype=torch.float64) / dh)) / factor
    f = torch.arange(T, dtype=torch.float64)[:, None] * inv[None, :]
    emb = torch.cat((f, f), dim=-1)
    return emb.cos().to(dtype), emb.sin().to(dtype)


def sliding(cfg, l):
    """Whether layer l slides (Gemma 2: layers 0, 2, ...; Gemma 3: all but
    every sliding_window_pattern-th)."""
    return slides(cfg, l, 2 if cfg["model_type"] == "gemma2" else cfg.get("sliding_window_pattern", 6))


def forward_gemma(cfg, W, ids):
    """logits [T, V], maps [L][H, T, T], [], block outputs [L][T, d]."""
    g3 = cfg["model_type"] == "gemma3_text"
    d, H, Hkv, dh = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["head_dim"]
    eps, T, grp, dt = cfg["rms_norm_eps"], len(ids), H // Hkv, W["model.norm.weight"].dtype
    scaling = cfg["query_pre_attn_scalar"] ** -0.5
    cap = cfg.get("attn_logit_softcapping")
    factor = (cfg.get("rope_scaling") or {}).get("factor", 1.0)
    glob = cos_sin(T, dh, cfg["rope_theta"], factor, dt)
    loc = cos_sin(T, dh, cfg["rope_local_base_freq"], 1.0, dt) if g3 else glob
    x = W["model.embed_tokens.weight"][ids] * torch.tensor(d ** 0.5, dtype=torch.float32).to(dt)
    att, hidden = [], []
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        h = rms_norm(x, W[p + "input_layernorm.weight"], eps, True)
        q = F.linear(h, W[p + "self_attn.q_proj.weight"]).view(T, H, dh)
        k = F.linear(h, W[p + "self_attn.k_proj.weight"]).view(T, Hkv, dh)
        v = F.linear(h, W[p + "self_attn.v_proj.weight"]).view(T, Hkv, dh).transpose(0, 1)
        if g3:
            q = rms_norm(q, W[p + "self_attn.q_norm.weight"], eps, True)
            k = rms_norm(k, W[p + "self_attn.k_norm.weight"], eps, True)
        q, k = q.transpose(0, 1), k.transpose(0, 1)
        sl = sliding(cfg, l)
        cos, sin = loc if sl else glob
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(grp, dim=0), v.repeat_interleave(grp, dim=0)
        o, probs = causal_attention(q, k, v, (cfg.get("sliding_window") or None) if sl else None, scaling, cap)
        o = F.linear(o.reshape(T, H * dh), W[p + "self_attn.o_proj.weight"])
        x = x + rms_norm(o, W[p + "post_attention_layernorm.weight"], eps, True)
        h = rms_norm(x, W[p + "pre_feedforward_layernorm.weight"], eps, True)
        m = gelu_tanh(F.linear(h, W[p + "mlp.gate_proj.weight"])) * F.linear(h, W[p + "mlp.up_proj.weight"])
        m = F.linear(m, W[p + "mlp.down_proj.weight"])
        x = x + rms_norm(m, W[p + "post_feedforward_layernorm.weight"], eps, True)
        att.append(probs)
        hidden.append(x)
    logits = rms_norm(x, W["model.norm.weight"], eps, True) @ W["model.embed_tokens.weight"].T
    if cfg.get("final_logit_softcapping"):
        c = cfg["final_logit_softcapping"]
        logits = torch.tanh(logits / c) * c
    return logits, att, [], hidden


def weights_gemma(cfg, g, mat, vec):
    """Random weights (norm weights around 0: the multiplier is 1 + w)."""
    d, H, V, ff = cfg["hidden_size"], cfg["num_attention_heads"], cfg["vocab_size"], cfg["intermediate_size"]
    Hkv, dh = cfg["num_key_value_heads"], cfg["head_dim"]
    W = {"model.embed_tokens.weight": 0.3 * torch.randn(V, d, generator=g), "model.norm.weight": vec(g, d, 0.0, 0.2)}
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        for n in ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm",
                  "post_feedforward_layernorm"):
            W[p + n + ".weight"] = vec(g, d, 0.0, 0.2)
        W[p + "self_attn.q_proj.weight"] = mat(g, H * dh, d, 4.0)
        W[p + "self_attn.k_proj.weight"] = mat(g, Hkv * dh, d, 4.0)
        W[p + "self_attn.v_proj.weight"] = mat(g, Hkv * dh, d)
        W[p + "self_attn.o_proj.weight"] = mat(g, d, H * dh)
        if cfg["model_type"] == "gemma3_text":
            W[p + "self_attn.q_norm.weight"] = vec(g, dh, 0.0, 0.2)
            W[p + "self_attn.k_norm.weight"] = vec(g, dh, 0.0, 0.2)
        W[p + "mlp.gate_proj.weight"] = mat(g, ff, d)
        W[p + "mlp.up_proj.weight"] = mat(g, ff, d)
        W[p + "mlp.down_proj.weight"] = mat(g, d, ff)
    return W


def gemma2_cfg(**kw):
    c = {"architectures": ["Gemma2ForCausalLM"], "model_type": "gemma2", "hidden_size": 32,
         "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
         "intermediate_size": 64, "vocab_size": 128, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
         "rope_theta": 10000.0, "hidden_activation": "gelu_pytorch_tanh", "query_pre_attn_scalar": 16,
         "sliding_window": 4, "attn_logit_softcapping": 3.0, "final_logit_softcapping": 5.0,
         "tie_word_embeddings": True, "bos_token_id": 2, "torch_dtype": "float32"}
    c.update(kw)
    return c


def gemma3_cfg(**kw):
    c = {"architectures": ["Gemma3ForCausalLM"], "model_type": "gemma3_text", "hidden_size": 32,
         "num_hidden_layers": 3, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
         "intermediate_size": 64, "vocab_size": 128, "max_position_embeddings": 64, "rms_norm_eps": 1e-6,
         "rope_theta": 1000000.0, "rope_local_base_freq": 10.0, "hidden_activation": "gelu_pytorch_tanh",
         "query_pre_attn_scalar": 8, "sliding_window": 4, "sliding_window_pattern": 2,
         "attn_logit_softcapping": None, "final_logit_softcapping": None, "rope_scaling": None,
         "tie_word_embeddings": True, "bos_token_id": 2, "torch_dtype": "float32"}
    c.update(kw)
    return c


def gemma3mm_cfg(text, dtype):
    """Gemma3ForConditionalGeneration's config.json around the text model's
    config `text` (Gemma3Config, modular_gemma3.py of transformers v4.50):
    its keys that Gemma3TextConfig defaults (rope_theta 1e6, bos_token_id 2)
    left out, as the published multimodal configs leave keys out; a tiny
    SigLIP vision config that gatelab does not read."""
    t = {k: v for k, v in text.items() if k not in ("architectures", "rope_theta", "bos_token_id",
                                                    "torch_dtype")}
    return {"architectures": ["Gemma3ForConditionalGeneration"], "model_type": "gemma3",
            "text_config": t, "mm_tokens_per_image": 4, "boi_token_index": 120, "eoi_token_index": 121,
            "image_token_index": 122, "torch_dtype": dtype,
            "vision_config": {"model_type": "siglip_vision_model", "hidden_size": 8, "num_hidden_layers": 1,
                              "num_attention_heads": 2, "intermediate_size": 16, "image_size": 16,
                              "patch_size": 8}}


def gemma3mm_weights(W, v5, g):
    """The text model's weights W under the multimodal layout: model.* as
    language_model.model.* (transformers < 4.52) or model.language_model.*
    (v4.52 on), beside two vision-side tensors gatelab leaves unread."""
    out = {(("model.language_model." if v5 else "language_model.model.") + k[len("model."):]): t
           for k, t in W.items()}
    vis = "model.vision_tower." if v5 else "vision_tower."
    proj = "model.multi_modal_projector." if v5 else "multi_modal_projector."
    out[vis + "vision_model.post_layernorm.weight"] = torch.randn(8, generator=g)
    out[proj + "mm_input_projection_weight"] = torch.randn(8, 32, generator=g)
    return out


# name: (family, config, dtype, shards), make_hf_fixtures.py's FIXTURES. The
# F32 ones slide over 4 keys on layers 0 and 2 of 3 (layer 1 full); the
# BF16 ones over 64 keys, so that runs of 40-token windows can be inspected
# (gatelab refuses longer windows than a sliding window where only some
# layers slide); gemma3-bf16-sharded names its layers in layer_types and
# scales its global RoPE linearly.
GEMMA_FIXTURES = {
    "gemma2-f32": ("gemma", gemma2_cfg(), "F32", 1),
    "gemma2-bf16-sharded": ("gemma", gemma2_cfg(sliding_window=64, num_key_value_heads=1), "BF16", 2),
    "gemma3-f32": ("gemma", gemma3_cfg(), "F32", 1),
    "gemma3-bf16-sharded": ("gemma", gemma3_cfg(sliding_window=64, rope_scaling={"rope_type": "linear", "factor": 2.0},
                                                layer_types=["sliding_attention", "full_attention",
                                                             "sliding_attention"]), "BF16", 2),
    # Gemma3ForConditionalGeneration's text tower (config: the text model's;
    # make_hf_fixtures.py wraps it, gemma3mm_cfg, and renames the weights)
    "gemma3mm-f32": ("gemma3mm", gemma3_cfg(), "F32", 1),
    "gemma3mm-v5-bf16-sharded": ("gemma3mm-v5", gemma3_cfg(sliding_window=64, num_key_value_heads=1),
                                 "BF16", 2),
}
