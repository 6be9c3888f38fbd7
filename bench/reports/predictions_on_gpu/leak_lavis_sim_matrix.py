# Source: https://github.com/salesforce/LAVIS/blob/bda0774e8c4d53d92a820aad1bb63a73e2bc33dc/lavis/models/albef_models/__init__.py
# Report: audited idiom: compute_sim_matrix collects the per-image ViT token features for the whole eval set; the repository moves them to CPU as it goes (image_feats.append(image_feat.cpu()))
# Shape: this rewrite drops the .cpu(): every batch's [B, 577, 768] token features stay on the GPU until the loop ends (and the small embeddings too)
# Expect: TML004 line 51; TML004 line 52
import logging
import time

import torch
import torch.nn.functional as F


@torch.no_grad()
def encode_texts(model, texts, text_bs=256):
    text_ids, text_embeds, text_atts = [], [], []
    for i in range(0, len(texts), text_bs):
        chunk = texts[i : i + text_bs]
        text_input = model.tokenizer(
            chunk, padding="max_length", truncation=True, max_length=35, return_tensors="pt"
        ).to(model.device)
        text_output = model.text_encoder.forward_text(text_input)
        text_embed = F.normalize(model.text_proj(text_output.last_hidden_state[:, 0, :]))
        text_embeds.append(text_embed.cpu())
        text_ids.append(text_input.input_ids.cpu())
        text_atts.append(text_input.attention_mask.cpu())
    return (
        torch.cat(text_ids).to(model.device),
        torch.cat(text_embeds).to(model.device),
        torch.cat(text_atts).to(model.device),
    )


@torch.no_grad()
def compute_sim_matrix(model, data_loader, **kwargs):
    k_test = kwargs.pop("k_test")
    logging.info("Computing features for evaluation...")
    start_time = time.time()

    texts = data_loader.dataset.text
    text_ids, text_embeds, text_atts = encode_texts(model, texts)
    if hasattr(model.tokenizer, "enc_token_id"):
        text_ids[:, 0] = model.tokenizer.enc_token_id

    image_feats = []
    image_embeds = []
    for samples in data_loader:
        image = samples["image"].to(model.device)
        image_feat = model.visual_encoder.forward_features(image)
        image_embed = model.vision_proj(image_feat[:, 0, :])
        image_embed = F.normalize(image_embed, dim=-1)

        image_feats.append(image_feat)  # expect: TML004
        image_embeds.append(image_embed)  # expect: TML004

    image_feats = torch.cat(image_feats, dim=0)
    image_embeds = torch.cat(image_embeds, dim=0)

    sims_matrix = image_embeds @ text_embeds.t()
    score_matrix_i2t = torch.full(
        (len(data_loader.dataset.image), len(texts)), -100.0, device=model.device
    )
    for i, sims in enumerate(sims_matrix):
        topk_sim, topk_idx = sims.topk(k=k_test, dim=0)
        encoder_output = image_feats[i].repeat(k_test, 1, 1)
        encoder_att = torch.ones(encoder_output.size()[:-1], dtype=torch.long, device=model.device)
        output = model.text_encoder(
            text_ids[topk_idx],
            attention_mask=text_atts[topk_idx],
            encoder_hidden_states=encoder_output,
            encoder_attention_mask=encoder_att,
            return_dict=True,
        )
        score = model.itm_head(output.last_hidden_state[:, 0, :])[:, 1]
        score_matrix_i2t[i, topk_idx] = score + topk_sim

    logging.info("Evaluation time %.1fs", time.time() - start_time)
    return score_matrix_i2t.cpu().numpy()
