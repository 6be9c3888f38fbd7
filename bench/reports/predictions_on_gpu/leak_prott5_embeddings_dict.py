# Source: https://github.com/ievapudz/TemStaPro/blob/main/prottrans_models.py
# Report: realistic one-edit mistake on a correct ProtT5 embedding extractor: the embeddings are kept as torch tensors (to torch.save them later) and the .cpu().numpy() copy is dropped
# Shape: the forward runs under no_grad, so the embeddings are plain device tensors; each per-residue (L x 1024) and per-protein slice is stored in a results dict that outlives the batch loop, and the views keep each whole batch's last_hidden_state alive on the GPU
# Expect: TML004 lines 47, 50
import sys

import torch


def get_embeddings(model, tokenizer, seqs, per_residue, per_protein,
                   max_residues=4000, max_seq_len=2000, max_batch=100):
    """Embed sequences in length-sorted batches; returns dicts keyed by sequence id."""
    device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")

    results = {"per_res_representations": dict(), "mean_representations": dict()}
    seq_dict = sorted(seqs.items(), key=lambda kv: len(seqs[kv[0]]), reverse=True)
    batch = list()

    for seq_idx, (pdb_id, seq) in enumerate(seq_dict, 1):
        seq_len = len(seq)
        seq = " ".join(list(seq))
        batch.append((pdb_id, seq, seq_len))
        n_res_batch = sum([s_len for _, _, s_len in batch]) + seq_len

        flush = (len(batch) >= max_batch or n_res_batch >= max_residues
                 or seq_idx == len(seq_dict) or seq_len > max_seq_len)
        if not flush:
            continue

        pdb_ids, batch_seqs, seq_lens = zip(*batch)
        batch = list()
        token_encoding = tokenizer.batch_encode_plus(batch_seqs, add_special_tokens=True, padding="longest")
        input_ids = torch.tensor(token_encoding["input_ids"]).to(device)
        attention_mask = torch.tensor(token_encoding["attention_mask"]).to(device)

        try:
            with torch.no_grad():
                embedding_repr = model(input_ids, attention_mask=attention_mask)
        except RuntimeError:
            print(f"runtime error embedding {pdb_id} (L={seq_len}); lower the batch size", file=sys.stderr)
            continue

        for batch_idx, identifier in enumerate(pdb_ids):
            s_len = seq_lens[batch_idx]
            emb = embedding_repr.last_hidden_state[batch_idx, :s_len]
            if per_residue:
                results["per_res_representations"][identifier] = emb  # expect: TML004
            if per_protein:
                protein_emb = emb.mean(dim=0)
                results["mean_representations"][identifier] = protein_emb  # expect: TML004

    return results


def save_embeddings(sequences, embeddings, out_dir):
    for seq_id, seq in sequences.items():
        if seq_id not in embeddings["mean_representations"]:
            continue
        record = {"label": seq_id, "sequence": seq}
        for key in ("mean_representations", "per_res_representations"):
            record[key] = torch.as_tensor(embeddings[key][seq_id])
        torch.save(record, f"{out_dir}/{seq_id}.pt")
