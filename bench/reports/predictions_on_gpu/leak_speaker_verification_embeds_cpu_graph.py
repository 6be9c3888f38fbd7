# Source: https://github.com/m-bain/whisperX/blob/cec8826bfcbc9ab3c7daa4d89fdba89f115b369f/whisperx/prosody_features/eval_sv_model.py
# Report: audit of a prosody speaker-verification eval script: extract_embeddings runs model.get_features(audio) over the whole enrollment and test loaders with no no_grad anywhere and appends `z.cpu()` to a list; the .cpu() copy keeps its autograd history, so every batch's encoder activations stay pinned on the GPU until torch.cat and the EER computation finish
# Shape: a Lightning-style SV model exposes get_features(); extract_embeddings returns (embeds, labels) through maybe_load_or_generate_embeds, optionally torch.save()d, then averaged per speaker and scored with cosine similarity
# Expect: TML003 line 27; TML001 line 28
import os

import torch
import tqdm


def eer(pos, neg):
    thresholds = torch.unique(torch.cat([pos, neg]))
    best, best_gap = 0.0, float("inf")
    for t in thresholds:
        frr = (pos <= t).float().mean().item()
        far = (neg > t).float().mean().item()
        if abs(far - frr) < best_gap:
            best, best_gap = (far + frr) / 2, abs(far - frr)
    return best


def extract_embeddings(model, dataloader, device="cuda"):
    model.eval()
    embeds, labels = [], []
    for audio, spk in tqdm.tqdm(dataloader, desc="Extracting embeddings"):
        audio = audio.to(device)
        z = model.get_features(audio).cpu()  # expect: TML003
        embeds.append(z)  # expect: TML001
        labels.append(spk)
    return torch.cat(embeds, 0), torch.cat(labels, 0)


def maybe_load_or_generate_embeds(model, dataloader=None, embed_dir=None, should_save=False, device="cuda"):
    if embed_dir and os.path.exists(os.path.join(embed_dir, "embeds.pt")):
        embeds = torch.load(os.path.join(embed_dir, "embeds.pt"), map_location="cpu")
        labels = torch.load(os.path.join(embed_dir, "labels.pt"), map_location="cpu")
        return embeds, labels
    embeds, labels = extract_embeddings(model, dataloader, device)
    if should_save and embed_dir:
        torch.save(embeds, os.path.join(embed_dir, "embeds.pt"))
        torch.save(labels, os.path.join(embed_dir, "labels.pt"))
    return embeds, labels


def per_speaker_mean(embeds, labels, num_speakers):
    sums = torch.zeros(num_speakers, embeds.shape[1]).index_add_(0, labels, embeds)
    counts = torch.bincount(labels, minlength=num_speakers).clamp(min=1).unsqueeze(1)
    return sums / counts


def cosine_speaker_verification(enroll_embeds, enroll_labels, test_embeds, test_labels, num_speakers):
    centroids = per_speaker_mean(enroll_embeds, enroll_labels, num_speakers)
    centroids = centroids / centroids.norm(dim=1, keepdim=True)
    test_embeds = test_embeds / test_embeds.norm(dim=1, keepdim=True)
    sim = test_embeds @ centroids.T
    pos_mask = torch.zeros_like(sim, dtype=torch.bool)
    pos_mask[torch.arange(len(sim)), test_labels] = True
    return eer(sim[pos_mask], sim[~pos_mask])


def run_speaker_verification_eval(model, num_speakers, enroll_loader, test_loader, device="cuda",
                                  enroll_dir=None, test_dir=None, save_embeds=False):
    model = model.to(device)
    enroll_embeds, enroll_labels = maybe_load_or_generate_embeds(model, enroll_loader, enroll_dir, save_embeds, device)
    test_embeds, test_labels = maybe_load_or_generate_embeds(model, test_loader, test_dir, save_embeds, device)
    score = cosine_speaker_verification(enroll_embeds, enroll_labels, test_embeds, test_labels, num_speakers)
    print(f"EER: {score:.4f}")
    return score
