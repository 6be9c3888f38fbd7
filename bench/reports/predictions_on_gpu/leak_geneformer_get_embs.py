# Source: https://github.com/helicalAI/helical/pull/267
# Report: in the Geneformer embedding helper every minibatch's cell / gene / CLS embeddings stayed in embs_list on the GPU and were only offloaded with .cpu().numpy() after the whole dataset; the reviewer flagged that this leaves all embeddings on the GPU until the end and runs into OOM
# Shape: get_embs() runs the model under no_grad per minibatch and appends the CUDA hidden-state slices (mean, full, CLS .clone().detach()) to embs_list, converting only after the loop
# Expect: TML004 line 39; TML004 line 41; TML004 line 44
import numpy as np
import torch
from tqdm.auto import trange


def mean_nonpadding_embs(embs, lengths):
    mask = torch.arange(embs.size(1), device=embs.device)[None, :] < lengths[:, None]
    return (embs * mask.unsqueeze(-1)).sum(1) / lengths.unsqueeze(-1)


def get_embs(model, dataset, emb_mode, layer_to_quant, pad_token_id, forward_batch_size,
             cls_present=True, device="cuda"):
    model = model.to(device).eval()
    embs_list = []
    overall_max_len = 0
    for i in trange(0, len(dataset), forward_batch_size, leave=False):
        minibatch = dataset[i:i + forward_batch_size]
        lengths = torch.tensor(minibatch["length"], device=device)
        max_len = int(lengths.max())
        input_ids = [torch.tensor(x) for x in minibatch["input_ids"]]
        input_ids = torch.nn.utils.rnn.pad_sequence(input_ids, batch_first=True, padding_value=pad_token_id)
        attention_mask = (input_ids != pad_token_id).long()

        with torch.no_grad():
            outputs = model(
                input_ids=input_ids.to(device),
                attention_mask=attention_mask.to(device),
                output_hidden_states=True,
            )
        embs_i = outputs.hidden_states[layer_to_quant]

        if emb_mode == "cell":
            body = embs_i[:, 1:, :] if cls_present else embs_i
            mean_embs = mean_nonpadding_embs(body, lengths - (1 if cls_present else 0))
            embs_list.append(mean_embs)  # expect: TML004
        elif emb_mode == "gene":
            embs_list.append(embs_i)  # expect: TML004
        elif emb_mode == "cls":
            cls_embs = embs_i[:, 0, :].clone().detach()
            embs_list.append(cls_embs)  # expect: TML004
        overall_max_len = max(overall_max_len, max_len)
        del outputs, embs_i

    if emb_mode == "gene":
        # variable-length per batch: returned unpadded, padded by the caller
        return [e.cpu().numpy() for e in embs_list], overall_max_len
    return np.concatenate([e.cpu().numpy() for e in embs_list], axis=0)
