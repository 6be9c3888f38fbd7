# Source: https://github.com/facebookresearch/esm/issues/548
# Report: generating ESM-2 (esm2_t33_650M_UR50D) per-residue representations for ~10,000 long protein sequences exhausts memory; the user asks how to run the same extraction on CUDA.
# Shape: the extraction runs on CUDA in batches under torch.no_grad(); each batch's layer-33 representation slices (device tensors) are kept in a dict that outlives the loop, so the whole proteome's embeddings pile up on the GPU.
# Expect: TML004 line 36
import torch
import esm


def batched(data, batch_size):
    for start in range(0, len(data), batch_size):
        yield data[start:start + batch_size]


def load_esm2(device):
    model, alphabet = esm.pretrained.esm2_t33_650M_UR50D()
    model = model.eval().to(device)
    return model, alphabet


def extract_representations(data, repr_layer=33, batch_size=8, device="cuda"):
    model, alphabet = load_esm2(device)
    batch_converter = alphabet.get_batch_converter()
    sequence_representations = {}
    for chunk in batched(data, batch_size):
        batch_labels, batch_strs, batch_tokens = batch_converter(chunk)
        batch_lens = (batch_tokens != alphabet.padding_idx).sum(1)
        batch_tokens = batch_tokens.to(device, non_blocking=True)

        with torch.no_grad():
            results = model(batch_tokens, repr_layers=[repr_layer], return_contacts=False)
        token_representations = results["representations"][repr_layer]

        for i, (label, tokens_len) in enumerate(zip(batch_labels, batch_lens)):
            # mean over residues, dropping BOS/EOS
            mean_repr = token_representations[i, 1:tokens_len - 1].mean(0)
            sequence_representations[label] = mean_repr  # expect: TML004

    return sequence_representations


def main(fasta_records, out_path):
    data = [(rec.id, str(rec.seq)) for rec in fasta_records]
    reps = extract_representations(data)
    torch.save(reps, out_path)
