# Source: https://github.com/ThilinaRajapakse/simpletransformers/pull/834
# Report: RepresentationModel.encode_sentences ran BERT/GPT-2 over every batch of sentences with autograd on (and without eval()), so each forward saved activations nobody backpropagates through; reviewer: add model.eval() and torch.no_grad() "to save memory and computation" (review asks for eval() + no_grad; fixed in commit 2f167f4a8dca69c01458a3ce49e823b9999cfe85 "Run representation model in eval mode")
# Shape: wrapper-class method: self.model forward per batch with grad enabled and no eval() call; the pooled embedding travels through a helper, is detached and concatenated as numpy (that part is fine)
# Expect: TML003 line 43
import numpy as np
import torch
from transformers import BertTokenizer

from simpletransformers.language_representation.transformer_models.bert_model import BertForTextRepresentation


def mean_across_all_tokens(token_vectors):
    return torch.mean(token_vectors, dim=1)


def concat_all_tokens(token_vectors):
    batch_size, max_tokens, emb_dim = token_vectors.shape
    return torch.reshape(token_vectors, (batch_size, max_tokens * emb_dim))


def batch_iterable(iterable, batch_size=1):
    length = len(iterable)
    for ndx in range(0, length, batch_size):
        yield iterable[ndx:min(ndx + batch_size, length)]


class RepresentationModel:
    def __init__(self, model_name, use_cuda=True):
        self.device = torch.device("cuda" if use_cuda and torch.cuda.is_available() else "cpu")
        self.tokenizer = BertTokenizer.from_pretrained(model_name)
        self.model = BertForTextRepresentation.from_pretrained(model_name)

    def _tokenize(self, text_list):
        return self.tokenizer.batch_encode_plus(text_list, add_special_tokens=True, max_length=128,
                                                padding=True, truncation=True, return_tensors="pt")

    def encode_sentences(self, text_list, combine_strategy=None, batch_size=32):
        self.model.to(self.device)
        embedding_func_mapping = {"mean": mean_across_all_tokens, "concat": concat_all_tokens}
        embeddings = np.array([])
        for batch in batch_iterable(text_list, batch_size=batch_size):
            encoded = self._tokenize(batch)
            token_vectors = self.model(  # expect: TML003
                input_ids=encoded["input_ids"].to(self.device),
                attention_mask=encoded["attention_mask"].to(self.device),
                token_type_ids=encoded["token_type_ids"].to(self.device),
            )
            if combine_strategy:
                if combine_strategy not in embedding_func_mapping:
                    raise ValueError("Provided combine_strategy is not valid. supported values are: 'concat', 'mean' and None.")
                batch_embeddings = embedding_func_mapping[combine_strategy](token_vectors).detach()
            else:
                batch_embeddings = token_vectors.detach()
            if len(embeddings) == 0:
                embeddings = batch_embeddings.cpu().detach().numpy()
            else:
                embeddings = np.concatenate((embeddings, batch_embeddings.cpu().detach().numpy()), axis=0)
        return embeddings
