"""Small configurations of Hugging Face transformers models, for the
unseen-model checks (scripts/check_unseen_models.py): the architectures'
own export paths (attention masks, position ids, rotary and relative
positions, patch embeddings, feature encoders) at a fraction of the size.
Random weights; nothing is downloaded.

Each model returns its last hidden state. Text models read token ids in
[0, VOCABULARY); sequence-to-sequence models also decoder ids; vision
models a 32 x 32 (64 x 64 for MobileViT) image; speech models 1600 audio
samples (wav2vec 2.0, HuBERT) or 16 x 64 log-mel frames (Whisper).
"""

VOCABULARY = 1000
TOKENS = dict(pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _configs(hf):
    """name -> (model factory, input kind)."""
    small = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                 intermediate_size=128, vocab_size=VOCABULARY,
                 max_position_embeddings=128)
    # RoBERTa-style positions start after the padding id.
    shifted = dict(small, max_position_embeddings=130)
    decoder_only = dict(small, num_key_value_heads=4, **TOKENS)
    vit = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
               intermediate_size=128, image_size=32, patch_size=8)
    speech = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=128, conv_dim=(32, 32, 32),
                  conv_stride=(5, 2, 2), conv_kernel=(10, 3, 3),
                  num_conv_pos_embeddings=16, num_conv_pos_embedding_groups=4)
    seq2seq = dict(d_model=64, encoder_layers=2, decoder_layers=2,
                   encoder_attention_heads=4, decoder_attention_heads=4,
                   encoder_ffn_dim=128, decoder_ffn_dim=128,
                   vocab_size=VOCABULARY, **TOKENS)
    t5 = dict(d_model=64, d_kv=16, d_ff=128, num_layers=2, num_heads=4,
              vocab_size=VOCABULARY, decoder_start_token_id=0)
    return {
        # Encoders.
        "hf_bert": (lambda: hf.BertModel(hf.BertConfig(**small)), "text"),
        "hf_distilbert": (lambda: hf.DistilBertModel(hf.DistilBertConfig(
            dim=64, n_layers=2, n_heads=4, hidden_dim=128,
            vocab_size=VOCABULARY, max_position_embeddings=128)), "text"),
        "hf_roberta": (lambda: hf.RobertaModel(hf.RobertaConfig(**shifted)), "text"),
        "hf_xlm_roberta": (lambda: hf.XLMRobertaModel(hf.XLMRobertaConfig(**shifted)),
                           "text"),
        "hf_albert": (lambda: hf.AlbertModel(hf.AlbertConfig(embedding_size=32, **small)),
                      "text"),
        "hf_electra": (lambda: hf.ElectraModel(hf.ElectraConfig(embedding_size=32, **small)),
                       "text"),
        "hf_mpnet": (lambda: hf.MPNetModel(hf.MPNetConfig(**shifted)), "text"),
        "hf_deberta_v2": (lambda: hf.DebertaV2Model(hf.DebertaV2Config(
            **small, relative_attention=True, position_buckets=16,
            pos_att_type=["p2c", "c2p"])), "text"),
        "hf_mobilebert": (lambda: hf.MobileBertModel(hf.MobileBertConfig(
            vocab_size=VOCABULARY, hidden_size=64, num_hidden_layers=2,
            num_attention_heads=4, intermediate_size=128, embedding_size=32,
            intra_bottleneck_size=32, true_hidden_size=32,
            max_position_embeddings=128)), "text"),
        "hf_funnel": (lambda: hf.FunnelModel(hf.FunnelConfig(
            vocab_size=VOCABULARY, block_sizes=[1, 1], d_model=64, n_head=4,
            d_head=16, d_inner=128)), "text"),
        "hf_t5_encoder": (lambda: hf.T5EncoderModel(hf.T5Config(**t5)), "text"),
        "hf_clip_text": (lambda: hf.CLIPTextModel(hf.CLIPTextConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            intermediate_size=128, vocab_size=VOCABULARY,
            max_position_embeddings=32, eos_token_id=2)), "text"),
        # Decoders: causal masks, rotary positions, ALiBi, parallel blocks.
        "hf_gpt2": (lambda: hf.GPT2Model(hf.GPT2Config(
            n_embd=64, n_layer=2, n_head=4, vocab_size=VOCABULARY,
            n_positions=128, bos_token_id=1, eos_token_id=2)), "text"),
        "hf_gpt_neo": (lambda: hf.GPTNeoModel(hf.GPTNeoConfig(
            hidden_size=64, num_layers=2, num_heads=4,
            attention_types=[[["global", "local"], 1]], window_size=8,
            vocab_size=VOCABULARY, max_position_embeddings=128, **TOKENS)), "text"),
        "hf_gptj": (lambda: hf.GPTJModel(hf.GPTJConfig(
            n_embd=64, n_layer=2, n_head=4, rotary_dim=8, vocab_size=VOCABULARY,
            n_positions=128, **TOKENS)), "text"),
        "hf_opt": (lambda: hf.OPTModel(hf.OPTConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            ffn_dim=128, vocab_size=VOCABULARY, max_position_embeddings=128,
            word_embed_proj_dim=64, **TOKENS)), "text"),
        "hf_bloom": (lambda: hf.BloomModel(hf.BloomConfig(
            hidden_size=64, n_layer=2, n_head=4, vocab_size=VOCABULARY, **TOKENS)),
            "text"),
        "hf_falcon": (lambda: hf.FalconModel(hf.FalconConfig(
            hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
            vocab_size=VOCABULARY, **TOKENS)), "text"),
        "hf_llama": (lambda: hf.LlamaModel(hf.LlamaConfig(**decoder_only)), "text"),
        "hf_mistral": (lambda: hf.MistralModel(hf.MistralConfig(
            **decoder_only, sliding_window=None)), "text"),
        "hf_qwen2": (lambda: hf.Qwen2Model(hf.Qwen2Config(**decoder_only)), "text"),
        "hf_gemma": (lambda: hf.GemmaModel(hf.GemmaConfig(**decoder_only, head_dim=16)),
                     "text"),
        "hf_phi": (lambda: hf.PhiModel(hf.PhiConfig(**small, **TOKENS)), "text"),
        # Encoder-decoders: the decoder's last hidden state.
        "hf_bart": (lambda: hf.BartModel(hf.BartConfig(
            max_position_embeddings=128, **seq2seq)), "seq2seq"),
        "hf_t5": (lambda: hf.T5Model(hf.T5Config(**t5)), "seq2seq"),
        # Vision.
        "hf_vit": (lambda: hf.ViTModel(hf.ViTConfig(**vit)), "image"),
        "hf_deit": (lambda: hf.DeiTModel(hf.DeiTConfig(**vit)), "image"),
        "hf_clip_vision": (lambda: hf.CLIPVisionModel(hf.CLIPVisionConfig(**vit)),
                           "image"),
        "hf_swin": (lambda: hf.SwinModel(hf.SwinConfig(
            image_size=32, patch_size=4, embed_dim=16, depths=[2, 2],
            num_heads=[2, 2], window_size=4)), "image"),
        "hf_convnext": (lambda: hf.ConvNextModel(hf.ConvNextConfig(
            hidden_sizes=[16, 32], depths=[1, 1], num_stages=2)), "image"),
        "hf_resnet": (lambda: hf.ResNetModel(hf.ResNetConfig(
            embedding_size=16, hidden_sizes=[16, 32], depths=[1, 1])), "image"),
        "hf_segformer": (lambda: hf.SegformerModel(hf.SegformerConfig(
            num_encoder_blocks=2, depths=[1, 1], sr_ratios=[2, 1],
            hidden_sizes=[16, 32], num_attention_heads=[1, 2],
            patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2],
            decoder_hidden_size=32)), "image"),
        "hf_mobilevit": (lambda: hf.MobileViTModel(hf.MobileViTConfig(
            image_size=64, hidden_sizes=[32, 48, 64],
            neck_hidden_sizes=[8, 16, 24, 32, 40, 48, 64])), "image64"),
        # Speech.
        "hf_wav2vec2": (lambda: hf.Wav2Vec2Model(hf.Wav2Vec2Config(**speech)), "audio"),
        "hf_hubert": (lambda: hf.HubertModel(hf.HubertConfig(**speech)), "audio"),
        "hf_whisper_encoder": (lambda: hf.WhisperModel(hf.WhisperConfig(
            num_mel_bins=16, max_source_positions=32, decoder_start_token_id=1,
            **seq2seq)).get_encoder(), "mel"),
    }


def names():
    """Every model this module builds, in a fixed order."""
    import transformers
    return list(_configs(transformers))


def input_kind(name):
    """"text", "seq2seq", "image", "image64", "audio" or "mel"."""
    import transformers
    return _configs(transformers)[name][1]


def build(name):
    """(module, example inputs, input names): the module maps the inputs
    (batch 1) to the model's last hidden state."""
    import torch
    import transformers

    factory, kind = _configs(transformers)[name]
    model = factory()
    ids = torch.randint(0, VOCABULARY, (1, 16))
    inputs = {
        "text": (ids,),
        "seq2seq": (ids, torch.randint(0, VOCABULARY, (1, 8))),
        "image": (torch.randn(1, 3, 32, 32),),
        "image64": (torch.randn(1, 3, 64, 64),),
        "audio": (torch.randn(1, 1600),),
        "mel": (torch.randn(1, 16, 64),),
    }[kind]

    class LastHiddenState(torch.nn.Module):
        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, x, decoder_ids=None):
            if decoder_ids is None:
                return self.net(x, return_dict=False)[0]
            return self.net(x, decoder_input_ids=decoder_ids, return_dict=False)[0]

    input_names = ["input", "decoder_input"][:len(inputs)]
    return LastHiddenState(model), inputs, input_names
